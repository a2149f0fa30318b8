"""Pipelines that stop at their first failure (pytest `-x`, `go test -failfast`): the
tripwires and the twins run in an invocation of their own after the steps
(ci_runner.tripwires.apart), in real sandboxed runs."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from arena.tasks.schema import Task
from ci_runner import CIRequest, CIResult, CIRunner, CIStatus, TestOutcome
from ci_runner.pipeline import Pipeline
from ci_runner.tripwires.apart import STEP_NAME
from tests.ci_runner.tripwires.test_tripwires_real import CONFTEST_HOOK
from tests.diffs import new_file

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("no_containers_left")]

FAIL_FAST = {
    "py-textkit-slug": ("python3 -m pytest -q", "python3 -m pytest -x -q"),
    "go-lru-recency": ("go test -json", "go test -failfast -json"),
}

Run = Callable[[str, tuple[str, ...]], CIResult]


def fail_fast(name: str, pipeline: Pipeline) -> Pipeline:
    """The demo's pipeline with its runner told to stop at the first failure."""
    old, new = FAIL_FAST[name]
    steps = tuple(s.model_copy(update={"run": s.run.replace(old, new)}) for s in pipeline.steps)
    assert any(new in s.run for s in steps)
    return pipeline.model_copy(update={"steps": steps})


@pytest.fixture(scope="module")
def run(runner: CIRunner, images: dict[str, str], demo: dict[str, Task]) -> Run:
    def run(name: str, diffs: tuple[str, ...]) -> CIResult:
        task = demo[name]
        request = CIRequest(
            repo=task.repo,
            commit=task.base_commit,
            pipeline=fail_fast(name, task.require_pipeline()),
            image=images[task.language.value],
            diffs=diffs,
        )
        return runner.run(request)

    return run


@pytest.mark.parametrize("name", list(FAIL_FAST))
def test_a_fail_fast_pipeline_runs_its_must_fail_tripwires_apart_and_passes(
    run: Run, demo: dict[str, Task], name: str
) -> None:
    """The run's own steps carry no tripwire (they end well: one that must pass could be left
    out by an honest run stopping at a failure); they ran apart, the one that must fail failed
    there, and the run is not the worse for it."""
    task = demo[name]
    fixed = run(name, (task.patch, task.test_patch))
    assert fixed.status is CIStatus.PASSED and fixed.forged is None, fixed.error
    assert fixed.apart is not None and fixed.apart.name == STEP_NAME
    assert fixed.apart.exit_code not in (0, None), fixed.apart.log  # its tripwire failed
    own = [s for s in fixed.tripwires if not s.site.endswith("(run apart)")]
    apart = [s for s in fixed.tripwires if s.site.endswith("(run apart)")]
    assert not own, fixed.tripwires
    assert apart and all(s.held and s.failing_planted for s in apart), fixed.tripwires
    assert fixed.steps[-1].exit_code == 0 and not fixed.steps[-1].tripwire_exit
    assert all(not s.skipped for s in fixed.steps)


def test_a_hook_turning_failures_into_passes_is_seen_by_the_tripwires_run_apart(
    run: Run, demo: dict[str, Task]
) -> None:
    """No fix, `pytest -x`: pytest counts every failure as a pass. The run's own steps carry
    no tripwire; the one that must fail, run apart, was reported passed: forged."""
    task = demo["py-textkit-slug"]
    forged = run("py-textkit-slug", (new_file("conftest.py", CONFTEST_HOOK), task.test_patch))
    assert set(forged.tests.values()) == {TestOutcome.PASSED}
    assert forged.forged is not None and "must fail was reported passed" in forged.forged
    assert any(s.site.endswith("(run apart)") for s in forged.tripwires)
    assert forged.status is CIStatus.FAILED
