"""Where a run's tripwires go, which of them may fail, and when they are written.

The languages are the pipeline's: its report format (JUnit: Python, `go test -json`: Go,
libtest: Rust, ctest: C and C++) and the test runners its steps name, each language's its
profile's `tripwires` form (`ci_runner.languages`: runner, report format, planting, fail
rule, the invocation run apart).

The tripwire that must fail makes its test command exit non-zero. It is planted only where
that changes nothing else the job runs: its runner is on the last line of the last step
(no command after it that `-e` or `&&` would skip), no option stops the runner at the first
failure (pytest `-x`, `--maxfail`, `--stepwise` on a pytest line, in PYTEST_ADDOPTS or the
pytest configuration's addopts; `go test -failfast`), and `cargo test` runs every binary
(`--no-fail-fast`: without it the first failing binary stops the rest). Elsewhere the
tripwires, with the twins, go in an invocation of their own after the steps where the
language can run its runner line so (`apart`: pytest, `go test`, on a step's own line or
one of a make target or a script it runs, `ci_runner.tripwires.scripts`); where it cannot,
the run carries only the tripwire that must pass, and is unguarded. The runner then knows the last
step's exit for its own (`StepResult.tripwire_exit`, ci_runner.tripwires.verdict).

The files are written just before the first step that runs tests (for Rust, the first that
builds them), so lint and format steps before it never read them; when that is the first
step, or none can be told, they go in with the workspace copy, at no cost of their own.
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ci_runner.errors import PatchError, WorkspaceError
from ci_runner.languages import TripwireForm, profiles
from ci_runner.languages.shell import logical_lines
from ci_runner.languages.sites import Site, plain_dir, plain_file
from ci_runner.languages.twins import MAX_TWINS, Twin, TwinForm, plant_twins
from ci_runner.patches import parse_diff
from ci_runner.pipeline import Pipeline, Step
from ci_runner.tripwires.apart import (
    Apart,
    apart_run,
    relabelled,
    runner_line,
    unseen_tests,
)
from ci_runner.tripwires.scripts import hidden_lines, script_lines
from ci_runner.workflows.commands import test_runners

_CHAINED = re.compile(r"&&|;")


@dataclass(frozen=True)
class Planting:
    """A run's tripwire sites, its twins of unseen tests with the test files they change,
    and the step the files go in before (0: with the copy)."""

    sites: tuple[Site, ...] = ()
    before_step: int = 0
    twins: tuple[Twin, ...] = ()
    twin_files: Mapping[str, bytes] = field(default_factory=dict)
    apart: Apart | None = None  # the must-fail tripwires' own invocation, after the steps

    @property
    def files(self) -> dict[str, bytes]:
        planted = {path: data for site in self.sites for path, data in site.files.items()}
        return {**planted, **self.twin_files}


def forms() -> dict[str, TripwireForm]:
    """The tripwire form of each language that has one, by language."""
    return {p.name: p.tripwires for p in profiles() if p.tripwires is not None}


def twin_forms() -> dict[str, TwinForm]:
    """The twin form of each language that makes twins, by language."""
    return {n: f.twins for n, f in forms().items() if f.twins is not None}


def languages(pipeline: Pipeline) -> list[str]:
    """The languages whose tests the pipeline runs, by its report and its steps' runners."""
    found = set()
    for language, form in forms().items():
        if pipeline.report.format == form.report_format or any(
            form.runner.search(step.run) for step in pipeline.steps
        ):
            found.add(language)
    return sorted(found)


def touched_paths(diffs: Iterable[str]) -> frozenset[str]:
    """Paths the run's diffs create or change."""
    paths: set[str] = set()
    for index, text in enumerate(diffs):
        try:
            for patch in parse_diff(text, index):
                if patch is not None:
                    paths.add(patch.delta.new_file.path)
        except PatchError:
            continue
    return frozenset(paths)


def _last_line(steps: tuple[Step, ...]) -> str:
    lines = [line for line in logical_lines(steps[-1].run) if not line.startswith("#")]
    return lines[-1] if lines else ""


def runs_last(pipeline: Pipeline, language: str) -> re.Match[str] | None:
    """The test runner on the last line of the last step, with no command chained after."""
    line = _last_line(pipeline.steps)
    found = forms()[language].runner.search(line) or test_runners().search(line)
    if found is None or _CHAINED.search(line, found.end()):
        return None
    return found


def may_fail(root: Path, pipeline: Pipeline, language: str) -> bool:
    """Whether a tripwire that fails cannot change what else the job runs (module doc)."""
    last = runs_last(pipeline, language)
    if last is None:
        return False
    return forms()[language].may_fail(root, pipeline, script_lines(root, pipeline), last)


def first_step(pipeline: Pipeline, names: Iterable[str]) -> int:
    """The first step that runs (or, for Rust, builds) the tests of one of the languages;
    0 when none can be told (a runner hidden in a script finds the files there)."""
    chosen = [forms()[n] for n in names]
    patterns = [f.runner for f in chosen] + [f.builds for f in chosen if f.builds is not None]
    for index, step in enumerate(pipeline.steps):
        if any(p.search(step.run) for p in patterns) or test_runners().search(step.run):
            return index
    return 0


def plan(
    root: Path,
    pipeline: Pipeline,
    diffs: Sequence[str],
    unseen: Iterable[int] = (),
    twin_seed: int | None = None,
) -> Planting:
    """The run's tripwires, fresh names each time, for the tree at `root` (diffs applied),
    and, with a seed, twins of the tests in the `unseen` diffs where a failing test may be
    planted (the seed decides which: the same twins on the same tests)."""
    names = languages(pipeline)
    if not names:
        return Planting()
    touched = touched_paths(diffs)
    unseen_diffs = [diffs[i] for i in unseen if 0 <= i < len(diffs)]
    rng = random.Random(twin_seed)
    sites: list[Site] = []
    failing_languages = []
    apart = None  # one language's tripwires, all of them, in their own invocation
    for language in names:
        failing = may_fail(root, pipeline, language)
        failing_languages += [language] if failing else []
        if not failing and apart is None:
            apart = _apart(root, pipeline, language, touched, unseen_diffs, rng, twin_seed)
            if apart is not None:
                continue
        sites += forms()[language].plant(root, pipeline, touched, failing)
    sites = _writable_sites(root, sites)
    twins, twin_files = _twins(root, failing_languages, unseen_diffs, rng, twin_seed)
    twin_files = _with_sites(root, twin_files, sites)
    planted = bool(sites or twins)
    before = first_step(pipeline, names) if planted else 0
    return Planting(tuple(sites), before, twins, twin_files, apart)


def _writable_sites(root: Path, sites: Iterable[Site]) -> list[Site]:
    return [s for s in sites if all(writable(root, path) for path in s.files)]


def _twins(
    root: Path,
    languages: Sequence[str],
    unseen_diffs: Sequence[str],
    rng: random.Random,
    twin_seed: int | None,
) -> tuple[tuple[Twin, ...], dict[str, bytes]]:
    """The twins of the unseen diffs' tests in the languages' files, and those files."""
    makers = {n: f for n, f in twin_forms().items() if n in languages}
    if not makers or not unseen_diffs or twin_seed is None:
        return (), {}
    twins, twin_files = plant_twins(root, makers, unseen_diffs, rng, MAX_TWINS)
    kept = {p: d for p, d in twin_files.items() if writable(root, p)}
    if kept != twin_files:  # a file that cannot be written takes its twins with it
        twins = tuple(t for t in twins if t.path in kept)
    return twins, kept


def _apart(
    root: Path,
    pipeline: Pipeline,
    language: str,
    touched: frozenset[str],
    unseen_diffs: Sequence[str],
    rng: random.Random,
    twin_seed: int | None,
) -> Apart | None:
    """The language's tripwires and twins, in their own invocation (`apart`), or None where
    its runner line cannot be run so.

    All of them: a run that stops at its first failure honestly leaves out a must-pass
    tripwire collected after the failing test, which would read as forged."""
    form = forms()[language]
    found = runner_line(pipeline, form) or runner_line(pipeline, None)
    if form.apart is None or found is None:
        return None
    sites = relabelled(_writable_sites(root, form.plant(root, pipeline, touched, True)))
    twins, twin_files = _twins(root, [language], unseen_diffs, rng, twin_seed)
    twin_files = _with_sites(root, twin_files, sites)
    unseen = unseen_tests(root, unseen_diffs)
    step, line = found
    # the step's own line, else the last line of a make target or a script it names that
    # the language can run so (`make test` running `pytest -x tests`)
    hidden = [
        (step.model_copy(update={"workdir": d}), x) for d, x in hidden_lines(root, pipeline, line)
    ]
    for candidate in [(step, line), *reversed(hidden)]:
        apart = apart_run(root, pipeline, form, candidate, sites, twins, twin_files, unseen)
        if apart is not None:
            return apart
    return None


def _with_sites(
    root: Path, twin_files: dict[str, bytes], sites: Sequence[Site]
) -> dict[str, bytes]:
    """The twinned files, each also holding what a tripwire site appends to the same file
    (a Rust test target gets its tripwire module at its end, and may get twins too)."""
    composed = dict(twin_files)
    for site in sites:
        for path, planted in site.files.items():
            if path not in composed:
                continue
            try:
                original = (root / path).read_bytes()
            except OSError:
                continue
            if planted.startswith(original):
                composed[path] += planted[len(original) :]
    return composed


def writable(root: Path, relative: str) -> bool:
    """A new file, or a regular one, in a directory reached through no symlink."""
    path = root / relative
    if not plain_dir(root, path.parent):
        return False
    return plain_file(root, path) or not os.path.lexists(path)


def write(root: Path, files: Mapping[str, bytes]) -> None:
    """Write the files into the host's copy of the workspace, before it is copied in: a new
    file or a regular file replaced, in a directory reached through no symlink (never
    following one out of the workspace)."""
    for relative, data in files.items():
        path = root / relative
        if not writable(root, relative):
            raise WorkspaceError(f"cannot write the tripwire {relative}: not a plain file")
        flags = os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC
        if plain_file(root, path):
            flags |= os.O_TRUNC
        else:
            flags |= os.O_CREAT | os.O_EXCL
        fd = os.open(path, flags, 0o644)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
