"""The must-fail tripwires' own invocation, for a pipeline that cannot carry them.

A tripwire that must fail makes its runner's command exit non-zero: where an option stops the
runner at its first failure (pytest `-x`, `--maxfail`; `go test -failfast`), or commands
follow the runner that a failure would skip, planting it in the run would change what the job
runs. There every tripwire of the language goes apart (a run that stops at a failing test
honestly leaves out a must-pass tripwire collected after it): once the steps are done, the
runner runs the language's test runner once more, as the pipeline's last runner line runs it
(its prefix, its step's environment and folder, its options but those that stop at a failure
or select tests), on the must-fail tripwires and on the files holding the twins of the unseen
tests only, never stopping at a failure (swing-protocol.md: "a pipeline that stops at its
first failure runs its must-fail tripwires in a separate invocation"). The code under test
is loaded as the tests load it, so code that rewrites the runner's results does so there
too, and is seen. Only the twins and the tripwires are read from that invocation; the run's
tests are the pipeline's own.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ci_runner.image_layout import WORKSPACE
from ci_runner.languages import TripwireForm
from ci_runner.pipeline import Pipeline, ReportFormat, Step
from ci_runner.tripwires.sites import Site
from ci_runner.tripwires.twins import Twin
from ci_runner.workflows.commands import logical_lines

STEP_NAME = "arena: the must-fail tripwires, run apart"
REPORT_FILE = "arena-tripwires-apart.xml"  # in the workspace, beside the run's own report
MAX_SITES = 4  # the runner's time goes to the tests; a few places are enough to be seen
_LABEL = " (run apart)"


@dataclass(frozen=True)
class Apart:
    """The invocation (a step run after the pipeline's, in its runner step's folder and
    environment), the files written just before it, what it carries, and where its report
    is: a file in the sandbox, or its own log."""

    step: Step
    after: str  # the pipeline's step whose runner line it follows: it runs only if that ran
    sites: tuple[Site, ...]
    twins: tuple[Twin, ...]
    files: Mapping[str, bytes] = field(default_factory=dict)
    report_format: ReportFormat = ReportFormat.JUNIT
    report_path: str | None = None


def runner_line(pipeline: Pipeline, form: TripwireForm) -> tuple[Step, str] | None:
    """The last line of the steps that runs the language's test runner, and its step."""
    for step in reversed(pipeline.steps):
        for line in reversed(logical_lines(step.run)):
            if not line.startswith("#") and form.runner.search(line):
                return step, line
    return None


def relabelled(sites: Sequence[Site]) -> tuple[Site, ...]:
    """The apart sites, named apart from the run's own (a folder may hold one of each)."""
    return tuple(replace(s, label=s.label + _LABEL) for s in sites[:MAX_SITES])


def apart_run(
    root: Path,
    pipeline: Pipeline,
    form: TripwireForm,
    found: tuple[Step, str],
    sites: Sequence[Site],
    twins: Sequence[Twin],
    twin_files: Mapping[str, bytes],
) -> Apart | None:
    """The invocation of the runner line `found` (its step, the line: `runner_line`)
    carrying `sites` (their must-fail tripwires planted) and the twins, or None where the
    line cannot be run so (an option the language cannot run it without)."""
    if form.apart is None or not (sites or twins):
        return None
    step, line = found
    files = {path: data for site in sites for path, data in site.files.items()} | dict(twin_files)
    names = [n for s in sites for n in (s.passing, s.failing) if n]
    names += [n for t in twins for n in (t.original, t.twin)]
    paths = sorted(posixpath.join(WORKSPACE, p) for p in files)
    report = posixpath.join(WORKSPACE, REPORT_FILE)
    command = form.apart(root, pipeline, line, paths, names, report)
    if command is None:
        return None
    in_file = form.report_format is ReportFormat.JUNIT
    if in_file:  # never a report left by the run's own steps
        command = f"rm -f -- {report}\n{command}"
    return Apart(
        step=step.model_copy(update={"name": STEP_NAME, "run": command, "continue_on_error": True}),
        after=step.name,
        sites=tuple(sites),
        twins=tuple(twins),
        files=files,
        report_format=form.report_format,
        report_path=report if in_file else None,
    )
