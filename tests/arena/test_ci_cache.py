"""The CI result cache's one rule: a finished run is kept once; a timeout is re-run once and
never kept; an infrastructure fault raises and leaves nothing behind."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from arena.ci import TaskCI, cacheable
from arena.tasks.schema import Task
from ci_runner import CIRequest, CIResult, CIRunner, CISettings, CIStatus, SandboxError, StepResult
from ci_runner.images import ImageBuilder
from ci_runner.providers.docker.provider import DockerProvider
from ci_runner.sandbox import SandboxLost, StopCause


class FixedImages(ImageBuilder):
    """Image ids without an engine."""

    def image_id(self, name: str) -> str:
        return f"sha256:{name}"


class ScriptedRunner(CIRunner):
    """Answers each run with the next of `outcomes`: a result, or an error it raises."""

    def __init__(self, settings: CISettings, outcomes: list[CIResult | Exception]) -> None:
        super().__init__(settings, DockerProvider(settings, _no_engine()))
        self._outcomes: Iterator[CIResult | Exception] = iter(outcomes)
        self.runs = 0

    def run(self, request: CIRequest, *args: object, **kwargs: object) -> CIResult:
        self.runs += 1
        outcome = next(self._outcomes)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


def _no_engine() -> docker.DockerClient:
    return docker.DockerClient(base_url="unix:///nonexistent/arena-no-engine.sock", version="1.41")


def tiny_task() -> Task:
    return Task.model_validate(
        {
            "instance_id": "tiny",
            "repo": "/nonexistent/repo.git",
            "base_commit": "0" * 40,
            "language": "python",
            "image": "arena/ci-python:test",
            "patch": "",
            "pipeline": {
                "steps": [{"name": "test", "run": "true"}],
                "report": {"format": "junit", "path": "report.xml"},
            },
        }
    )


LOST = SandboxLost("the sandbox was stopped from outside: a kill", StopCause.OUTSIDE)
PASSED = CIResult(status=CIStatus.PASSED)
TIMEOUT = CIResult(status=CIStatus.TIMEOUT)


@pytest.fixture
def settings(tmp_path: Path) -> CISettings:
    return CISettings(cache_dir=tmp_path / "cache")


def _task_ci(settings: CISettings, runner: CIRunner, tmp_path: Path) -> TaskCI:
    return TaskCI(
        runner, FixedImages(DockerProvider(settings, _no_engine()), settings), tmp_path / "results"
    )


def test_an_infrastructure_fault_raises_and_is_never_kept(
    settings: CISettings, tmp_path: Path
) -> None:
    runner = ScriptedRunner(settings, [LOST, PASSED])
    task_ci = _task_ci(settings, runner, tmp_path)
    with pytest.raises(SandboxError, match="stopped from outside"):
        task_ci.run(tiny_task(), ())
    assert not list((tmp_path / "results").rglob("*.json"))
    assert task_ci.run(tiny_task(), ()).status is CIStatus.PASSED  # run again, then kept
    assert task_ci.run(tiny_task(), ()).status is CIStatus.PASSED
    assert runner.runs == 2


def test_an_infrastructure_fault_on_the_rerun_of_a_timeout_is_never_kept(
    settings: CISettings, tmp_path: Path
) -> None:
    runner = ScriptedRunner(settings, [TIMEOUT, LOST])
    with pytest.raises(SandboxLost):
        _task_ci(settings, runner, tmp_path).run(tiny_task(), ())
    assert runner.runs == 2
    assert not list((tmp_path / "results").rglob("*.json"))


def test_only_finished_runs_of_the_code_are_cacheable() -> None:
    own = StepResult(
        name="t", exit_code=137, duration_s=1, log="", stopped_by=StopCause.OWN_PROCESSES
    )
    outside = own.model_copy(update={"stopped_by": StopCause.OUTSIDE})
    assert cacheable(CIResult(status=CIStatus.FAILED, steps=(own,)))
    assert not cacheable(CIResult(status=CIStatus.FAILED, steps=(outside,)))
    assert not cacheable(TIMEOUT)


def test_a_rounds_runs_are_its_own_and_the_same_round_judged_again_reads_them(
    settings: CISettings, tmp_path: Path
) -> None:
    runner = ScriptedRunner(settings, [PASSED] * 3)
    task_ci = _task_ci(settings, runner, tmp_path)
    task_ci.run(tiny_task(), (), replica=3, round_key=1)
    task_ci.run(tiny_task(), (), replica=3, round_key=1)  # the round judged again: kept
    assert runner.runs == 1
    task_ci.run(tiny_task(), (), replica=3, round_key=2)  # another round, the same tree
    assert runner.runs == 2
    task_ci.run(tiny_task(), (), replica=3)  # validation's and the reference run's: shared
    task_ci.run(tiny_task(), (), replica=3)
    assert runner.runs == 3
