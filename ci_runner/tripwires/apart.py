"""The must-fail tripwires' own invocation, for a pipeline that cannot carry them.

A tripwire that must fail makes its runner's command exit non-zero: where an option stops the
runner at its first failure (pytest `-x`, `--maxfail`; `go test -failfast`), or commands
follow the runner that a failure would skip, planting it in the run would change what the job
runs. There every tripwire of the language goes apart (a run that stops at a failing test
honestly leaves out a must-pass tripwire collected after it): once the steps are done, the
runner runs the language's test runner once more, as the pipeline's last runner line runs it
(its prefix, its step's environment and folder, its options but those that stop at a failure
or select tests), on the must-fail tripwires, the twins and the unseen tests themselves (the gold
tests, the reviewer's: those the verdict turns on) only, never stopping at a failure
(swing-protocol.md: "a pipeline that stops at its first failure runs its must-fail
tripwires in a separate invocation"). The code under test is loaded as the tests load it,
so code that rewrites the runner's results does so there too, and is seen; and a test
reported there takes its outcome from there (verdict.decided_apart), or code that tells the
two invocations apart would rewrite the run's own, which carries no tripwire, unseen.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ci_runner.image_layout import WORKSPACE
from ci_runner.languages import TripwireForm
from ci_runner.languages.shell import logical_lines
from ci_runner.languages.sites import Site
from ci_runner.languages.twins import Twin, added_lines
from ci_runner.pipeline import Pipeline, ReportFormat, Step
from ci_runner.workflows.commands import test_runners

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


def runner_line(pipeline: Pipeline, form: TripwireForm | None) -> tuple[Step, str] | None:
    """The last line of the steps that runs the language's test runner (any test runner,
    make's and scripts' included, without a form), and its step."""
    runner = form.runner if form is not None else test_runners()
    for step in reversed(pipeline.steps):
        for line in reversed(logical_lines(step.run)):
            if not line.startswith("#") and runner.search(line):
                return step, line
    return None


# a test defined on an added line: pytest's and Go's (the languages with an invocation apart)
_TEST_DEFINED = re.compile(r"^\s*(?:async\s+)?(?:def|func)\s+(?P<name>(?:test|Test)\w*)\s*\(")
_TEST_FILE = re.compile(r"(?:^|/)(?:test_[^/]*\.py|[^/]*_test\.(?:py|go))$")


@dataclass(frozen=True)
class UnseenTests:
    """The test files the unseen diffs add to or change, and the tests they define."""

    paths: tuple[str, ...] = ()
    names: tuple[str, ...] = ()


def unseen_tests(root: Path, diffs: Sequence[str]) -> UnseenTests:
    """The unseen diffs' test files still in the tree at `root`, and the tests their added
    lines define (a runner selecting by name, `go test -run`, needs those)."""
    added = added_lines(diffs)
    paths = sorted(p for p in added if _TEST_FILE.search(p) and (root / p).is_file())
    names = {
        found["name"]
        for path in paths
        for line in added[path].values()
        if (found := _TEST_DEFINED.match(line))
    }
    return UnseenTests(tuple(paths), tuple(sorted(names)))


def run_apart(label: str) -> bool:
    """Whether a site's label names one of the invocation run apart."""
    return label.endswith(_LABEL)


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
    unseen: UnseenTests = UnseenTests(),
) -> Apart | None:
    """The invocation of the runner line `found` (its step, the line: `runner_line`)
    carrying `sites` (their must-fail tripwires planted), the twins and the `unseen` tests,
    or None where the line cannot be run so (an option the language cannot run it without)."""
    if form.apart is None or not (sites or twins):
        return None
    step, line = found
    files = {path: data for site in sites for path, data in site.files.items()} | dict(twin_files)
    names = [n for s in sites for n in (s.passing, s.failing) if n]
    names += [n for t in twins for n in (t.original, t.twin)]
    names += unseen.names
    paths = sorted(posixpath.join(WORKSPACE, p) for p in {*files, *unseen.paths})
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
