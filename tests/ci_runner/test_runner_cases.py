"""The runner splits a binary ctest ran whole into its cases, in the run's time, or leaves it.

A scripted sandbox stands for the container: what matters here is which commands the runner
sends, with which time limits, and what it keeps when a command fails it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path

import pytest

from ci_runner import CIRunner, CISettings, Limits, Pipeline
from ci_runner.reports.binaries import NOT_A_FRAMEWORK
from ci_runner.sandbox.base import ExecResult, Sandbox, SandboxDied, SandboxFileError
from ci_runner.stops import StopCause
from ci_runner.tripwires import Planting
from ci_runner.types import StepResult
from ci_runner.types import TestOutcome as T
from tests.ci_runner.reports.test_binaries import DOCTEST_XML, _listing, _test

OUT = "/tmp/arena-cases.Xy12ab"
CTEST_JUNIT = b"""<testsuite name="(empty)" tests="2" failures="1">
<testcase name="unit_tests" classname="unit_tests" status="fail"><failure message=""/></testcase>
<testcase name="other" classname="other" status="run"/>
</testsuite>"""
LISTING = _listing(
    _test("unit_tests", "/workspace/build/unit_tests", WORKING_DIRECTORY="/workspace/build"),
    _test("other", "/workspace/build/other", WORKING_DIRECTORY="/workspace/build"),
)
NO_TRIPWIRES = Planting()
PIPELINE = Pipeline.model_validate(
    {
        "steps": [
            {"name": "build", "run": "cmake -B build && cmake --build build"},
            {"name": "test", "run": "cd build && ctest --output-junit /workspace/r.xml"},
        ],
        "report": {"format": "ctest", "path": "r.xml"},
        "env": {"CTEST_OUTPUT_ON_FAILURE": "1"},
    }
)
STEPS = (
    StepResult(name="build", exit_code=0, duration_s=1.0, log=""),
    StepResult(
        name="test",
        exit_code=8,
        duration_s=1.0,
        log="50% tests passed, 1 tests failed out of 2\n",
    ),
)


class ScriptedSandbox(Sandbox):
    """Answers the discovery with one build tree, each case run with `case_runs` in turn."""

    def __init__(self, case_runs: list[ExecResult | type[BaseException]]) -> None:
        self.files = {"/workspace/r.xml": CTEST_JUNIT, f"{OUT}/ctest-1.json": LISTING}
        self.case_runs = case_runs
        self.execs: list[tuple[str, float, dict[str, str]]] = []

    def exec(
        self,
        command: str,
        *,
        env: dict[str, str],
        workdir: str,
        timeout_s: float,
        max_output_bytes: int,
    ) -> ExecResult:
        self.execs.append((command, timeout_s, env))
        if "ctest --show-only=json-v1" in command:
            return _done(0, f"out\t{OUT}\ntree\t1\t/workspace/build\n")
        answer = self.case_runs.pop(0)
        if isinstance(answer, type):
            raise answer("the sandbox stopped", StopCause.OWN_PROCESSES)
        if answer.exit_code not in (NOT_A_FRAMEWORK, None):
            self.files[command.split("--out=")[1].split()[0]] = DOCTEST_XML
        return answer

    def write_tree(self, source: Path, destination: str) -> None:
        raise NotImplementedError

    def write_file(self, path: str, data: bytes, mode: int = 0o644) -> None:
        raise NotImplementedError

    def write_files(self, root: str, files: Mapping[str, bytes]) -> None:
        raise NotImplementedError

    def read_file(self, path: str, max_bytes: int) -> bytes:
        if path not in self.files:
            raise SandboxFileError(f"no file at {path}")
        return self.files[path]

    @property
    def stopped_by(self) -> StopCause | None:
        return None

    def kill(self) -> None:
        return None

    def close(self) -> None:
        return None


def _done(exit_code: int | None, output: str = "", timed_out: bool = False) -> ExecResult:
    return ExecResult(
        exit_code=exit_code, output=output, truncated=False, timed_out=timed_out, duration_s=0.1
    )


@pytest.fixture
def runner(tmp_path: Path) -> CIRunner:
    return CIRunner(CISettings(cache_dir=tmp_path))


LIMITS = Limits(run_timeout_s=600)
DOCTEST_CASES = {
    "unit_tests::adds": T.PASSED,
    "unit_tests::fails": T.FAILED,
    "unit_tests::with subcases": T.FAILED,
    "unit_tests::skipped": T.SKIPPED,
    "unit_tests::tmpl<int>": T.PASSED,
}


def test_a_binary_ctest_ran_whole_is_split_into_its_cases(runner: CIRunner) -> None:
    sandbox = ScriptedSandbox([_done(1), _done(NOT_A_FRAMEWORK)])
    started = time.monotonic()
    tests, error, counted = runner._collect_report(
        sandbox, PIPELINE, STEPS, LIMITS, started, NO_TRIPWIRES
    )
    assert error is None
    assert tests == {**DOCTEST_CASES, "other": T.PASSED}  # `other` is no framework's binary
    assert counted == {"unit_tests": T.FAILED, "other": T.PASSED}  # what ctest's summary counts
    _, (first, timeout_s, env), _ = sandbox.execs
    assert "cd /workspace/build" in first and f"{OUT}/cases-1.xml" in first
    assert 590 < timeout_s <= 600 and env == {"CTEST_OUTPUT_ON_FAILURE": "1"}


def test_without_time_left_nothing_runs_again(runner: CIRunner) -> None:
    sandbox = ScriptedSandbox([])
    long_ago = time.monotonic() - 590
    tests, _, _ = runner._collect_report(sandbox, PIPELINE, STEPS, LIMITS, long_ago, NO_TRIPWIRES)
    assert tests == {"unit_tests": T.FAILED, "other": T.PASSED} and sandbox.execs == []


@pytest.mark.parametrize(
    "answer", [_done(None, timed_out=True), SandboxDied, _done(NOT_A_FRAMEWORK)]
)
def test_a_case_run_that_fails_us_leaves_the_binarys_id(
    runner: CIRunner, answer: ExecResult | type[BaseException]
) -> None:
    sandbox = ScriptedSandbox([answer, _done(NOT_A_FRAMEWORK)])
    tests, error, _ = runner._collect_report(
        sandbox, PIPELINE, STEPS, LIMITS, time.monotonic(), NO_TRIPWIRES
    )
    assert tests == {"unit_tests": T.FAILED, "other": T.PASSED} and error is None
    stopped = not isinstance(answer, ExecResult) or answer.timed_out
    assert len(sandbox.execs) == (2 if stopped else 3)  # a dead sandbox runs nothing more


def test_runs_that_stopped_early_or_are_not_ctests_are_left_as_they_are(
    runner: CIRunner,
) -> None:
    timed_out = (STEPS[0], STEPS[1].model_copy(update={"timed_out": True}))
    sandbox = ScriptedSandbox([])
    tests, _, _ = runner._collect_report(
        sandbox, PIPELINE, timed_out, LIMITS, time.monotonic(), NO_TRIPWIRES
    )
    assert tests == {"unit_tests": T.FAILED, "other": T.PASSED} and sandbox.execs == []
    pytest_run = Pipeline.model_validate(
        {"steps": [{"name": "t", "run": "pytest"}], "report": {"format": "junit", "path": "r.xml"}}
    )
    tests, _, _ = runner._collect_report(
        sandbox, pytest_run, STEPS, LIMITS, time.monotonic(), NO_TRIPWIRES
    )
    assert set(tests) == {"unit_tests", "other"} and sandbox.execs == []
