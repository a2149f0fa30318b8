"""One CI run end to end: checkout, diffs, sandboxed steps, report, result."""

from __future__ import annotations

import contextlib
import logging
import posixpath
import re
import shlex
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import NamedTuple

from ci_runner.background import in_background
from ci_runner.config import CISettings
from ci_runner.errors import (
    PatchError,
    ReportError,
    SandboxError,
    ServiceError,
    WorkspaceError,
)
from ci_runner.github_files import with_earlier_steps
from ci_runner.image_layout import WORKSPACE
from ci_runner.job_folder import step_command
from ci_runner.languages.outcomes import record
from ci_runner.outcome import overall_status
from ci_runner.patches import apply_diffs
from ci_runner.pipeline import Pipeline, ReportFormat, ReportSpec, Step
from ci_runner.providers import provider_for
from ci_runner.reports import contradiction, parse_report, runner_summary
from ci_runner.reports.binaries import (
    NOT_A_FRAMEWORK,
    RAN,
    case_run_script,
    discovery_script,
    parse_discovery,
    whole_binaries,
    with_cases,
)
from ci_runner.reports.cases import parse_cases
from ci_runner.reports.console import parse_console
from ci_runner.sandbox.base import ExecResult, Sandbox, SandboxDied, SandboxFileError
from ci_runner.sandbox.provider import BesideServices, SandboxProvider
from ci_runner.spares import IDLE_S, SpareSandboxes
from ci_runner.stops import StopCause
from ci_runner.tripwires import (
    Planting,
    TripwireIndex,
    decided_apart,
    dropped,
    plan,
    read_apart,
    read_tripwires,
    read_twins,
    tampered,
    tripwire_exits,
    twin_forms,
    write,
)
from ci_runner.types import CIRequest, CIResult, CIStatus, Limits, StepResult, TestOutcome
from ci_runner.workspace import Workspaces, remove_tree

log = logging.getLogger(__name__)

StepCallback = Callable[[StepResult], None]


def _no_callback(_: StepResult) -> None:
    return None


def _no_progress(_: str) -> None:
    return None


class CIRunner:
    """Runs CIRequests in fresh sandboxes of a provider; infrastructure faults raise
    SandboxError."""

    def __init__(
        self,
        settings: CISettings,
        provider: SandboxProvider | None = None,
        *,
        spares: bool = False,
    ) -> None:
        """`provider`: the one the settings name (ARENA_SANDBOX_PROVIDER) unless given.
        `spares`: keep the next run's sandbox started ahead (SpareSandboxes), for a runner
        that runs many (a worker, a tournament); a single run would only waste one."""
        self._settings = settings
        self._provider = provider or provider_for(settings)
        self._workspaces = Workspaces.from_settings(settings)
        self._spares: SpareSandboxes[Sandbox] | None = SpareSandboxes() if spares else None

    @property
    def workspaces(self) -> Workspaces:
        """Where its checkouts come from: the repositories' mirrors, also read file by file."""
        return self._workspaces

    @property
    def provider(self) -> SandboxProvider:
        """Where its sandboxes come from, and their images (for an ImageBuilder)."""
        return self._provider

    def run(self, request: CIRequest, on_step: StepCallback = _no_callback) -> CIResult:
        started = time.monotonic()
        limits = request.limits or self._settings.limits
        with _Starting(self._sandbox_for(request.image, limits)) as box:
            return self._run_in(request, on_step, box, limits, started)

    def close(self) -> None:
        """Remove the spare sandboxes kept for later runs (the process's exit does too)."""
        if self._spares is not None:
            self._spares.close()

    @contextlib.contextmanager
    def _used(self, sandbox: Sandbox) -> Iterator[Sandbox]:
        """The run's sandbox, removed once the run is done with it: in the background when
        the runner keeps spares (a worker's next run need not wait for it)."""
        try:
            yield sandbox
        finally:
            if self._spares is None:
                sandbox.close()
            else:
                self._spares.retire(sandbox)

    def _sandbox_for(self, image: str, limits: Limits) -> Future[Sandbox]:
        """A sandbox starting on its own thread while the checkout is made: the spare kept
        for this image and limits when there is one, and the next spare asked for."""

        def start(idle_s: float = 0.0) -> Sandbox:
            return self._provider.start(image, limits, idle_s=idle_s)

        if self._spares is None:
            return in_background(start, "sandbox-start")
        key = (image, limits)
        ready = self._spares.take(key) or in_background(start, "sandbox-start")
        self._spares.refill(key, lambda: start(IDLE_S))
        return ready

    def _run_in(
        self,
        request: CIRequest,
        on_step: StepCallback,
        box: _Starting,
        limits: Limits,
        started: float,
    ) -> CIResult:
        run_dir, repo = self._workspaces.checkout(request.repo, request.commit)
        try:
            try:
                fuzz = apply_diffs(run_dir, repo, request.diffs)
            except PatchError as exc:
                return CIResult(
                    status=CIStatus.ERROR,
                    error=f"patch rejected: {exc}",
                    patch_error=str(exc),
                    patch_error_diff=exc.diff_index,
                    duration_s=time.monotonic() - started,
                    image=request.image,
                )
            try:
                planting = plan(
                    run_dir,
                    request.pipeline,
                    request.diffs,
                    request.unseen_tests,
                    request.twin_seed,
                )
                if planting.before_step == 0:  # with the workspace copy: no round trip of its own
                    write(run_dir, planting.files)
            except (RecursionError, OSError, ValueError, WorkspaceError) as exc:
                # the tree the diffs made is what Arena could not handle: the code's doing
                why = f"the tree the diffs made cannot be guarded (tripwires): {exc!r}"
                return _the_codes(why, request, started)
            with self._used(box.sandbox()) as sandbox:
                try:
                    sandbox.write_tree(run_dir, WORKSPACE)
                except SandboxFileError as exc:
                    why = f"the tree the diffs made cannot be copied: {exc} of {limits.disk_mb} MiB"
                    return _the_codes(why, request, started)
                _discard(run_dir)  # the sandbox has its own copy now
                try:
                    services = self._services(sandbox, request.pipeline)
                except ServiceError as exc:
                    return CIResult(
                        status=CIStatus.ERROR,
                        error=str(exc),
                        duration_s=time.monotonic() - started,
                        image=request.image,
                    )
                with services:
                    steps, planting, unwritten = self._run_steps(
                        sandbox, request.pipeline, limits, started, on_step, planting
                    )
                    tests, report_error, counted = self._collect_report(
                        sandbox, request.pipeline, steps, limits, started, planting
                    )
                    apart = self._run_apart(
                        sandbox, request.pipeline, steps, limits, started, planting
                    )
                # its own processes kept the report from being read (a daemon, a fork bomb)
                stopped_after = None if any(s.stopped_by for s in steps) else sandbox.stopped_by
        finally:
            _discard(run_dir)
        distrust = (
            None
            if report_error
            else contradiction(
                runner_summary((s.log, s.truncated) for s in steps if not s.skipped), counted
            )
        )
        # a test and its twin both passing is judged by the caller, once the gold side vouched
        # for the twins (arena.protocol.twin_check): here they are only read
        tests, twins = read_twins(twin_forms(), planting.twins, tests)
        steps = tripwire_exits(steps, tests, planting, twins)
        tests, seen = read_tripwires(planting, tests)
        apart_tests, apart_twins, apart_seen = read_apart(planting.apart, apart.tests)
        tests = decided_apart(tests, apart_tests)
        twins, seen = twins + apart_twins, seen + apart_seen
        reasons = (distrust, tampered(seen), dropped(apart_seen), unwritten, apart.unwritten)
        forged = "; ".join(r for r in reasons if r) or None
        status, error = overall_status(steps, tests, report_error, limits, forged, stopped_after)
        return CIResult(
            status=status,
            steps=steps,
            tests=tests,
            error=error,
            fuzz=fuzz,
            duration_s=time.monotonic() - started,
            image=request.image,
            forged=forged,
            tripwires=seen,
            twins=twins,
            apart=apart.step,
        )

    def _services(self, sandbox: Sandbox, pipeline: Pipeline) -> BesideServices:
        """The job's `services:` beside the sandbox, reachable from it as localhost."""
        return self._provider.start_services(pipeline.services, sandbox, _no_progress)

    def _run_steps(
        self,
        sandbox: Sandbox,
        pipeline: Pipeline,
        limits: Limits,
        started: float,
        on_step: StepCallback,
        planting: Planting,
    ) -> RanSteps:
        """The steps' results and the tripwires that went in. Writing them before a later
        step can fail only by the sandbox's own doing (its processes filled the disk, or
        brought it down): then none went in, and the run cannot be checked (`unwritten`)."""
        results: list[StepResult] = []
        stopped = False
        unwritten = None
        for number, step in enumerate(pipeline.steps):
            if stopped:
                results.append(
                    StepResult(name=step.name, exit_code=None, duration_s=0.0, log="", skipped=True)
                )
                continue
            if number == planting.before_step and number > 0 and planting.files:
                try:
                    sandbox.write_files(WORKSPACE, planting.files)
                except (SandboxFileError, SandboxDied) as exc:
                    planting = Planting()
                    unwritten = (
                        f"the runner could not put its tripwire tests in place before step "
                        f"{step.name!r} ({exc}): the sandbox's own processes kept the results "
                        "from being checked"
                    )
            remaining = limits.run_timeout_s - (time.monotonic() - started)
            result = self._run_step(sandbox, pipeline, step, limits, max(remaining, 0.01))
            results.append(result)
            on_step(result)
            gave_up = not result.succeeded and not step.continue_on_error
            if result.timed_out or result.sandbox_died or gave_up:
                stopped = True
        if planting.before_step >= len(results) - sum(r.skipped for r in results):
            planting = Planting()  # the steps stopped before the tripwires went in
        return RanSteps(tuple(results), planting, unwritten)

    def _run_step(
        self,
        sandbox: Sandbox,
        pipeline: Pipeline,
        step: Step,
        limits: Limits,
        remaining: float,
    ) -> StepResult:
        command, workdir = step_command(pipeline, step)
        try:
            done = sandbox.exec(
                command,
                env={**pipeline.env, **step.env},
                workdir=posixpath.normpath(f"{WORKSPACE}/{workdir}"),
                timeout_s=min(step.timeout_s, remaining),
                max_output_bytes=limits.max_output_bytes,
            )
        except SandboxDied as exc:  # down by its own doing; SandboxLost (outside) raises on
            return StepResult(
                name=step.name,
                exit_code=None,
                duration_s=0.0,
                log=str(exc),
                oom_killed=exc.cause is StopCause.MEMORY,
                sandbox_died=True,
                stopped_by=exc.cause,
            )
        return StepResult(
            name=step.name,
            exit_code=done.exit_code,
            duration_s=done.duration_s,
            log=done.output,
            truncated=done.truncated,
            timed_out=done.timed_out,
            oom_killed=done.oom_killed,
            sandbox_died=done.sandbox_died,
            stopped_by=done.stopped_by,
        )

    def _run_apart(
        self,
        sandbox: Sandbox,
        pipeline: Pipeline,
        steps: tuple[StepResult, ...],
        limits: Limits,
        started: float,
        planting: Planting,
    ) -> RanApart:
        """The must-fail tripwires' own invocation (ci_runner.tripwires.apart), once the
        steps are done: due when the step whose runner line it follows ran, and nothing
        stopped the run (its time, its sandbox). One due with too little of the run's time
        left reports nothing: the steps' processes spent it (a hang there is the same)."""
        apart = planting.apart
        ran = {s.name: s for s in steps if not s.skipped}
        stopped = any(s.timed_out or s.sandbox_died or s.oom_killed for s in steps)
        if apart is None or apart.after not in ran or stopped:
            return RanApart()
        remaining = limits.run_timeout_s - (time.monotonic() - started)
        if remaining < MIN_APART_S:
            return RanApart(tests={})
        try:
            sandbox.write_files(WORKSPACE, apart.files)
        except (SandboxFileError, SandboxDied) as exc:
            why = (
                f"the runner could not put its must-fail tripwires in place for their own run "
                f"({exc}): the sandbox's own processes kept the results from being checked"
            )
            return RanApart(unwritten=why)
        result = self._run_step(sandbox, pipeline, apart.step, limits, remaining)
        try:
            if apart.report_path is not None:
                data = sandbox.read_file(apart.report_path, limits.max_report_bytes)
            else:
                data = result.log.encode()
            tests = parse_report(apart.report_format, data, limits.max_tests)
        except (SandboxFileError, SandboxDied, ReportError):
            tests = {}
        return RanApart(result, tests)

    def _junit_written(
        self, sandbox: Sandbox, spec: ReportSpec, steps: tuple[StepResult, ...], limits: Limits
    ) -> dict[str, TestOutcome] | None:
        """The results of the JUnit files the run's pytest says it wrote, or None."""
        if spec.format is not ReportFormat.JUNIT:
            return None
        results: dict[str, TestOutcome] = {}
        for path in junit_files_named("\n".join(s.log for s in steps if not s.skipped)):
            try:
                data = sandbox.read_file(path, limits.max_report_bytes)
                results |= parse_report(spec.format, data, limits.max_tests)
            except (SandboxFileError, ReportError):
                continue
        return results or None

    def _collect_report(
        self,
        sandbox: Sandbox,
        pipeline: Pipeline,
        steps: tuple[StepResult, ...],
        limits: Limits,
        started: float,
        planting: Planting,
    ) -> CollectedReport:
        """The run's tests; the cases of a binary ctest ran whole stand for its id (the
        tripwires' registrations of a binary are not the project's: they never count)."""
        tests, error = self._read_report(sandbox, pipeline, steps, limits)
        if error is not None or not runs_ctest(pipeline):
            return CollectedReport(tests, error, tests)
        deadline = started + limits.run_timeout_s
        index = TripwireIndex(planting)
        tripwires = frozenset(t for t in tests if index.find(t) is not None)
        cases = self._binary_cases(sandbox, pipeline, steps, limits, deadline, tests, tripwires)
        return CollectedReport(cases, None, tests)

    def _binary_cases(
        self,
        sandbox: Sandbox,
        pipeline: Pipeline,
        steps: tuple[StepResult, ...],
        limits: Limits,
        deadline: float,
        tests: dict[str, TestOutcome],
        tripwires: frozenset[str],
    ) -> dict[str, TestOutcome]:
        """`tests` with each binary that ctest ran whole split into its cases, each binary
        run again through its framework's reporter (ci_runner.reports.binaries) in the time
        left of the run; a binary not split keeps its id."""
        ran = {test for test, outcome in tests.items() if outcome in RAN} - tripwires
        if not ran or any(s.timed_out or s.sandbox_died for s in steps):
            return tests
        tests_step = ctest_step(pipeline)
        env = {**pipeline.env, **tests_step.env}

        def run(script: str, timeout_s: float) -> ExecResult:
            return sandbox.exec(
                with_earlier_steps(script, tests_step.env),
                env=env,
                workdir=WORKSPACE,
                timeout_s=timeout_s,
                max_output_bytes=limits.max_output_bytes,
            )

        try:
            remaining = deadline - time.monotonic()
            if remaining < MIN_CASE_RUN_S:
                return tests
            found = run(discovery_script(WORKSPACE), remaining)
            discovery = parse_discovery(found.output) if found.exit_code == 0 else None
            if discovery is None:
                return tests
            trees = []
            for listing, build_dir in discovery.trees:
                with contextlib.suppress(SandboxFileError):
                    trees.append((build_dir, sandbox.read_file(listing, limits.max_report_bytes)))
            wholes = whole_binaries(trees, ran, WORKSPACE, tripwires)
            for number, binary in enumerate(wholes, 1):
                remaining = deadline - time.monotonic()
                if remaining < MIN_CASE_RUN_S:
                    log.warning("no time left to split %s into its cases", binary.name)
                    break
                report = f"{discovery.out}/cases-{number}.xml"
                done = run(case_run_script(binary, report, remaining - CASE_RUN_GRACE_S), remaining)
                if done.timed_out or done.sandbox_died:
                    break
                if done.exit_code == NOT_A_FRAMEWORK:
                    continue
                try:
                    cases = parse_cases(sandbox.read_file(report, limits.max_report_bytes))
                except (SandboxFileError, ReportError):
                    continue
                if cases and binary.name in tests and len(tests) + len(cases) <= limits.max_tests:
                    tests = with_cases(tests, binary.name, cases, done.exit_code)
        except SandboxDied as exc:
            log.warning("the sandbox stopped while test binaries ran case by case: %s", exc)
        return tests

    def _matching_reports(
        self, sandbox: Sandbox, spec: ReportSpec, limits: Limits
    ) -> dict[str, TestOutcome]:
        """The tests of every report file `spec.path` matches, within one report's byte and
        test limits all together (a test in two files: its worst outcome stands)."""
        pattern = f"./{spec.path}"
        listed = sandbox.exec(
            f"find . -path {shlex.quote(pattern)} -type f -print | LC_ALL=C sort"
            f" | head -n {MAX_REPORT_FILES}",
            env={},
            workdir=WORKSPACE,
            timeout_s=REPORT_LISTING_S,
            max_output_bytes=MAX_REPORT_FILES * 4096,
        )
        paths = [line for line in listed.output.splitlines() if line.startswith("./")]
        if listed.exit_code != 0 or not paths:
            raise ReportError(f"no test report matches {spec.path}")
        tests: dict[str, TestOutcome] = {}
        budget = limits.max_report_bytes
        for relative in paths:
            try:
                data = sandbox.read_file(posixpath.join(WORKSPACE, relative[2:]), max(budget, 1))
            except SandboxFileError as exc:
                raise ReportError(
                    f"test report {relative[2:]}: {exc} (the files matching {spec.path} may hold "
                    f"{limits.max_report_bytes} bytes together)"
                ) from exc
            budget -= len(data)
            for test_id, outcome in parse_report(spec.format, data, limits.max_tests).items():
                record(tests, test_id, outcome)
            if len(tests) > limits.max_tests:
                raise ReportError(
                    f"the reports matching {spec.path} name over {limits.max_tests} tests"
                )
        return tests

    def _read_report(
        self,
        sandbox: Sandbox,
        pipeline: Pipeline,
        steps: tuple[StepResult, ...],
        limits: Limits,
    ) -> tuple[dict[str, TestOutcome], str | None]:
        spec = pipeline.report
        try:
            if spec.path is not None and "*" in spec.path:
                return self._matching_reports(sandbox, spec, limits), None
            if spec.path is not None:
                path = posixpath.join(WORKSPACE, spec.path)
                try:
                    data = sandbox.read_file(path, limits.max_report_bytes)
                except SandboxFileError as exc:
                    written = self._junit_written(sandbox, spec, steps, limits)
                    if written is not None:
                        return written, None
                    raise ReportError(f"test report: {exc}") from exc
            else:
                step = next(s for s in steps if s.name == spec.step)
                if step.skipped:
                    raise ReportError(f"report step {spec.step!r} did not run")
                data = step.log.encode()
            return parse_report(spec.format, data, limits.max_tests), None
        except ReportError as exc:
            # a wrapped runner (tox, make, a script) may hide the report: read the logs
            console = parse_console("\n".join(s.log for s in steps if not s.skipped))
            return (console, None) if console else ({}, str(exc))


class RanSteps(NamedTuple):
    """The steps' results, the tripwires that went in, and why none did when that was the
    sandbox's own doing."""

    steps: tuple[StepResult, ...]
    planting: Planting
    unwritten: str | None


class RanApart(NamedTuple):
    """The invocation run apart (None: it did not run), what its report says, and why its
    files could not go in when that was the sandbox's own doing."""

    step: StepResult | None = None
    tests: dict[str, TestOutcome] | None = None
    unwritten: str | None = None


class CollectedReport(NamedTuple):
    """The run's tests, the error when no report could be read, and the tests as the test
    runner counted them (a binary it ran whole is one test), which its summary line must
    agree with."""

    tests: dict[str, TestOutcome]
    error: str | None
    counted: dict[str, TestOutcome]


MAX_REPORT_FILES = 10_000  # report files a pattern may match (one per test class: Surefire)
REPORT_LISTING_S = 30.0  # how long listing them may take
MIN_APART_S = 5.0  # the invocation run apart starts only with this much of the run's time left
MIN_CASE_RUN_S = 15.0  # a case run starts only with this much of the run's time left
CASE_RUN_GRACE_S = 10.0  # its binary is stopped this long before the run's time is up
_CTEST = re.compile(r"(?:^|[^\w.+-])ctest(?:$|[^\w.+-])")


def runs_ctest(pipeline: Pipeline) -> bool:
    """Whether the pipeline's tests are ctest's: its report format, or a step running it."""
    return pipeline.report.format is ReportFormat.CTEST or any(
        _CTEST.search(step.run) for step in pipeline.steps
    )


def ctest_step(pipeline: Pipeline) -> Step:
    """The step that ran ctest (its env is the tests' env): the report's, or the last one
    naming ctest, or the last step."""
    named = [s for s in pipeline.steps if s.name == pipeline.report.step]
    named = named or [s for s in pipeline.steps if _CTEST.search(s.run)]
    return (named or list(pipeline.steps))[-1]


MAX_JUNIT_FILES = 8  # a run naming more is not read past them
_JUNIT_WRITTEN = re.compile(r"generated xml file: (?P<path>/\S+\.xml)")


def junit_files_named(logs: str) -> list[str]:
    """The JUnit files pytest says it wrote (`generated xml file: PATH`), in the workspace,
    once each: a job's own `--junitxml=...` on the command line wins over the one Arena adds
    through PYTEST_ADDOPTS, and its file holds the same results."""
    found = dict.fromkeys(m["path"] for m in _JUNIT_WRITTEN.finditer(logs))
    return [p for p in found if posixpath.normpath(p).startswith(f"{WORKSPACE}/")][:MAX_JUNIT_FILES]


class _Starting:
    """A sandbox starting in the background while the checkout is made and the diffs are
    applied on the host; one that is never taken (the checkout failed, a diff was refused)
    is closed on exit, and its start's failure is then nobody's concern."""

    def __init__(self, started: Future[Sandbox]) -> None:
        self._started = started
        self._taken = False

    def __enter__(self) -> _Starting:
        return self

    def sandbox(self) -> Sandbox:
        """The started sandbox, now the caller's to close; its start's failure is raised."""
        self._taken = True
        return self._started.result()

    def __exit__(self, *exc_info: object) -> None:
        if self._taken or self._started.exception() is not None:
            return
        try:
            self._started.result().close()
        except SandboxError as exc:
            log.warning("cannot remove an unused sandbox (arena ci sweep will): %s", exc)


def _discard(run_dir: Path) -> None:
    """Remove a run directory; a failure is logged, never put in place of the run's result.

    What is left is removed by `arena ci sweep` once this process is gone.
    """
    try:
        remove_tree(run_dir)
    except OSError as exc:
        log.warning("cannot remove run directory %s (arena ci sweep will): %s", run_dir, exc)


def _the_codes(why: str, request: CIRequest, started: float) -> CIResult:
    """A run the tree under test kept from running guarded: failed, and not believed (a must-
    pass tripwire is missing), so it is the code's verdict and never an infrastructure fault."""
    return CIResult(
        status=CIStatus.FAILED,
        error=why,
        forged=why,
        duration_s=time.monotonic() - started,
        image=request.image,
    )
