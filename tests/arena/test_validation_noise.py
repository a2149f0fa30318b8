"""Load is not a verdict: runs of one tree that look like the machine's doing (no report after
a failed step while the twin ran tests, twins disagreeing on every test) are run again, and
never stored as an invalid task or as flaky tests (swing-protocol.md, "Task validation")."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from arena.ci import TaskCI
from arena.tasks.schema import Task
from arena.validation import (
    NOISE_RERUNS,
    ValidationIncomplete,
    infrastructure_noise,
    validate_task,
)
from ci_runner import CIResult, CIStatus, TestOutcome
from ci_runner.types import StepResult

P, F = TestOutcome.PASSED, TestOutcome.FAILED
_TESTS = "diff --git a/test_w.py b/test_w.py\n"
_FIX = "diff --git a/w.py b/w.py\n"


def _ran(tests: dict[str, TestOutcome]) -> CIResult:
    failing = any(o is F for o in tests.values())
    step = StepResult(name="test", exit_code=1 if failing else 0, log="", duration_s=1.0)
    status = CIStatus.FAILED if failing else CIStatus.PASSED
    return CIResult(status=status, steps=(step,), tests=tests)


def _empty(step: str = "test", code: int = 1) -> CIResult:
    """A step failed and no report was read: what a loaded machine can leave."""
    failed = StepResult(name=step, exit_code=code, log="", duration_s=1.0)
    return CIResult(status=CIStatus.FAILED, steps=(failed,), error="the go-json report is empty")


FIXED = {"t_new": P, "t_old": P}
BROKEN = {"t_new": F, "t_old": P}


@pytest.mark.parametrize(
    ("runs", "noise"),
    [
        ([_ran(FIXED), _ran(FIXED)], None),
        ([_ran(FIXED), _empty()], "read no test after step 'test' failed while its twin ran"),
        ([_empty("build"), _empty("test")], "failed at different steps"),
        # a gold patch that does not build fails alike every time: the code's
        ([_empty("build", 2), _empty("build", 2)], None),
        ([_ran(FIXED), _ran({"t_new": F, "t_old": F})], "disagree on every one of the 2 tests"),
        ([_ran(FIXED), _ran(BROKEN)], None),  # one flaky test: recorded as flaky
        ([_ran({"t": P}), _ran({"t": F})], None),  # a suite of one that flips: flaky too
    ],
)
def test_what_looks_like_load_and_what_is_the_codes(
    runs: list[CIResult], noise: str | None
) -> None:
    found = infrastructure_noise(runs)
    assert (found is None) is (noise is None)
    if noise is not None:
        assert found is not None and noise in found


class QueuedCI(TaskCI):
    """Each tree's runs in the order they are made; a kept result forgotten runs again."""

    def __init__(self, queues: dict[bool, Iterator[CIResult]]) -> None:
        self.queues = queues
        self.kept: dict[tuple[bool, int], CIResult] = {}
        self.made = 0

    def deviation(self, task: Task) -> str | None:
        return None

    def run(self, task: Task, diffs: tuple[str, ...], replica: int = 0) -> CIResult:
        key = (task.patch in diffs, replica)
        if key not in self.kept:
            self.made += 1
            self.kept[key] = next(self.queues[key[0]])
        return self.kept[key]

    def forget(self, task: Task, diffs: tuple[str, ...], replica: int = 0) -> None:
        self.kept.pop((task.patch in diffs, replica), None)


def _task() -> Task:
    return Task.model_validate(
        {
            "instance_id": "acme__widget-1",
            "repo": "/nonexistent/widget",
            "base_commit": "0" * 40,
            "language": "python",
            "patch": _FIX,
            "test_patch": _TESTS,
            "pipeline": {
                "steps": [{"name": "test", "run": "pytest"}],
                "report": {"format": "junit", "path": "r.xml"},
            },
        }
    )


def test_an_empty_report_under_load_is_run_again_and_the_task_validates() -> None:
    """The demo task `demo__go-semver-prerelease` was stored invalid this way, its five tests
    flaky, on a loaded machine; the same task validated a minute later."""
    ci = QueuedCI(
        {
            False: iter([_ran(BROKEN), _ran(BROKEN)]),
            True: iter([_ran(FIXED), _empty(), _ran(FIXED), _ran(FIXED)]),
        }
    )
    verdict = validate_task(_task(), ci)
    assert verdict.valid, verdict.reason
    assert verdict.fail_to_pass == ("t_new",) and verdict.flaky == ()
    assert ci.made == 6  # both runs of the noisy tree were made again


def test_noise_that_persists_is_never_stored_as_a_verdict() -> None:
    noisy = iter([_ran(FIXED), _empty()] * (NOISE_RERUNS + 1))
    ci = QueuedCI({False: iter([_ran(BROKEN), _ran(BROKEN)]), True: noisy})
    with pytest.raises(ValidationIncomplete, match="not stored, it runs again next time"):
        validate_task(_task(), ci)
