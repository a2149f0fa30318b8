"""Who brought the sandbox down decides whose fault it is (swing-protocol.md, "Faults").

A kill from outside is infrastructure: SandboxError, retried, never cached. Anything its own
processes cause (a daemon killing the runner's processes, a fork bomb, its memory) is the
code's fault: the run is scored, with a reason naming them.
"""

from __future__ import annotations

import os
import random
import threading
import time
from dataclasses import replace
from pathlib import Path

import docker
import docker.errors
import pytest

from arena.ci import TaskCI
from arena.tasks.schema import Task
from ci_runner import CIRequest, CIResult, CIRunner, CIStatus, Limits, Pipeline, SandboxError
from ci_runner.images import ImageBuilder
from ci_runner.outcome import overall_status, step_problem
from ci_runner.providers.docker.provider import DockerProvider
from ci_runner.providers.docker.sandbox import LABEL, StopFacts, _suspicious, judge_stop
from ci_runner.sandbox import SandboxLost, StopCause
from ci_runner.types import StepResult
from tests.conftest import MakeRepo

# a process the code leaves running that kills every process of the sandbox user it can
KILLER = "nohup bash -c 'while :; do kill -9 -1 2>/dev/null; done' >/dev/null 2>&1 &"
# processes that keep every pid taken: a re-fork as soon as one is free
FILLER = (
    "nohup python3 -c 'import os, time\n"
    "while True:\n"
    "    try:\n"
    "        os.fork() or (time.sleep(1000), os._exit(0))\n"
    "    except OSError:\n"
    "        time.sleep(0.001)' >/dev/null 2>&1 &"
)
BOMB = "nohup bash -c 'bomb() { bomb | bomb & }; bomb' >/dev/null 2>&1 &"
REPORT = (
    'printf \'<testsuite><testcase classname="test_it" name="test_ok"/></testsuite>\' > report.xml'
)


# What the engine's facts say, decided without an engine.

ALIVE = StopFacts(
    removed=False, running=True, root_starts=True, oom=False, kills=(), pids=None, covered=True
)


@pytest.mark.parametrize(
    ("facts", "cause", "down"),
    [
        (ALIVE, StopCause.OWN_PROCESSES, False),
        (replace(ALIVE, oom=True), StopCause.MEMORY, False),
        (
            replace(ALIVE, root_starts=False, pids=(63, 64)),
            StopCause.PIDS,
            False,
        ),
        (
            replace(ALIVE, running=False, kills=("9",)),
            StopCause.OUTSIDE,
            True,
        ),
        (  # the kill is logged while the container still shows as running
            replace(ALIVE, root_starts=False, kills=("15",)),
            StopCause.OUTSIDE,
            True,
        ),
        (replace(ALIVE, removed=True, running=False), StopCause.OUTSIDE, True),
        (
            replace(ALIVE, running=False, oom=True),
            StopCause.MEMORY,
            True,
        ),
        (
            replace(ALIVE, running=False, root_starts=False),
            StopCause.OWN_PROCESSES,
            True,
        ),
        (  # stopped, no kill seen, but the engine's log no longer reaches back: cannot tell
            replace(ALIVE, running=False, root_starts=False, covered=False),
            StopCause.UNKNOWN,
            True,
        ),
        (  # running, nothing starts in it, no limit hit: the engine is stuck
            replace(ALIVE, root_starts=False),
            StopCause.UNKNOWN,
            True,
        ),
    ],
)
def test_the_engines_facts_name_who_stopped_it(facts: StopFacts, cause: str, down: bool) -> None:
    stop = judge_stop(facts)
    assert (stop.cause, stop.down) == (cause, down), stop.how
    assert stop.cause.is_infrastructure == (cause in ("outside", "unknown"))


@pytest.mark.parametrize(
    ("code", "text", "suspicious"),
    [
        (0, "", False),
        (1, "", False),
        (126, "bash: ./run.sh: Permission denied", False),
        (126, "OCI runtime exec failed: exec failed: read init-p: connection reset", True),
        (125, "arena: cannot stop the processes left running\n", True),
        (125, "", False),
        (137, "", True),
        (139, "", True),
        (None, "", True),
    ],
)
def test_only_exits_the_process_may_not_have_chosen_are_looked_into(
    code: int | None, text: str, suspicious: bool
) -> None:
    assert _suspicious(code, text) is suspicious


def test_a_stop_from_inside_is_a_failure_of_the_code_naming_its_own_processes() -> None:
    limits = Limits(pids=64, memory_mb=256)
    killed = StepResult(
        name="after", exit_code=137, duration_s=0.1, log="", stopped_by=StopCause.OWN_PROCESSES
    )
    assert step_problem(killed, limits) == (
        "step 'after' was stopped by the sandbox's own processes (it ended killed by SIGKILL)"
    )
    starved = killed.model_copy(update={"exit_code": 126, "stopped_by": StopCause.PIDS})
    assert "own processes used up its limit of 64 processes" in (
        step_problem(starved, limits) or ""
    )
    status, error = overall_status((killed,), {}, "no report", limits)
    assert status is CIStatus.FAILED and "own processes" in (error or "")
    clean = StepResult(name="test", exit_code=0, duration_s=0.1, log="")
    status, error = overall_status((clean,), {}, "no report", limits, None, StopCause.PIDS)
    assert status is CIStatus.FAILED
    assert "could not be read after the steps" in (error or "") and "64 processes" in (error or "")


# The same, with a real engine.


def _task(make_repo: MakeRepo, image: str, steps: list[dict[str, object]]) -> Task:
    repo, commit = make_repo({"README.md": "stops\n"})
    return Task.model_validate(
        {
            "instance_id": "stops",
            "repo": repo,
            "base_commit": commit,
            "language": "python",
            "image": image,
            "patch": "",
            "pipeline": {
                "steps": steps,
                "report": {"format": "junit", "path": "report.xml"},
            },
        }
    )


def _run(
    runner: CIRunner, make_repo: MakeRepo, image: str, steps: list[dict[str, object]]
) -> CIResult:
    repo, commit = make_repo({"README.md": "stops\n"})
    pipeline = Pipeline.model_validate(
        {"steps": steps, "report": {"format": "junit", "path": "report.xml"}}
    )
    return runner.run(
        CIRequest(repo=repo, commit=commit, pipeline=pipeline, image=image, limits=Limits(pids=64))
    )


def _kill_when_running(
    client: docker.DockerClient, marker: str, how: str, done: threading.Event
) -> None:
    """Kill this process's sandbox from outside once `marker` runs in it, a moment later."""
    while not done.is_set():
        for container in client.containers.list(
            ignore_removed=True,
            filters={"label": f"{LABEL}.pid={os.getpid()}", "status": "running"},
        ):
            try:
                running = any(marker in " ".join(p) for p in container.top()["Processes"])
                if not running:
                    continue
                time.sleep(random.uniform(0, 0.4))
                if how == "remove":
                    container.remove(force=True)
                else:
                    container.kill(signal=how)
            except docker.errors.APIError:
                continue  # it stopped or went away meanwhile: look again
            return
        time.sleep(0.05)


@pytest.mark.docker
@pytest.mark.usefixtures("no_containers_left")
def test_a_kill_from_outside_during_a_step_is_infrastructure_and_never_cached(
    runner: CIRunner,
    docker_client: docker.DockerClient,
    images: dict[str, str],
    make_repo: MakeRepo,
    tmp_path: Path,
) -> None:
    task = _task(make_repo, images["python"], [{"name": "test", "run": "sleep 29"}])
    results = tmp_path / "results"
    task_ci = TaskCI(
        runner,
        ImageBuilder(DockerProvider(runner._settings, docker_client), runner._settings),
        results,
    )
    started = time.monotonic()
    for how in ("SIGKILL", "SIGKILL", "SIGTERM", "SIGKILL", "remove", "SIGKILL"):
        done = threading.Event()
        killer = threading.Thread(
            target=_kill_when_running, args=(docker_client, "sleep 29", how, done), daemon=True
        )
        killer.start()
        try:
            with pytest.raises(SandboxLost) as lost:
                task_ci.run(task, ())
        finally:
            done.set()
            killer.join(10)
        assert isinstance(lost.value, SandboxError)
        assert lost.value.cause is StopCause.OUTSIDE, str(lost.value)
        assert not list(results.rglob("*.json")), "an infrastructure fault was cached"
    assert time.monotonic() - started < 60


@pytest.mark.docker
@pytest.mark.usefixtures("no_containers_left")
def test_a_daemon_killing_everything_fails_the_run_as_the_codes_fault(
    runner: CIRunner, images: dict[str, str], make_repo: MakeRepo
) -> None:
    steps: list[dict[str, object]] = [
        # it kills the shell of its own step too, within the second
        {"name": "plant", "run": f"{KILLER} sleep 2", "continue_on_error": True},
        {"name": "after", "run": "echo AFTER"},
    ]
    result = _run(runner, make_repo, images["python"], steps)  # no SandboxError
    plant, after = result.steps
    assert plant.stopped_by is StopCause.OWN_PROCESSES and not plant.sandbox_died
    assert after.stopped_by is StopCause.OWN_PROCESSES or "AFTER" in after.log
    assert result.status is CIStatus.FAILED
    assert "stopped by the sandbox's own processes" in (result.error or ""), result.error


@pytest.mark.docker
@pytest.mark.usefixtures("no_containers_left")
def test_a_daemon_left_by_the_last_step_kills_the_report_reader_as_the_codes_fault(
    runner: CIRunner, images: dict[str, str], make_repo: MakeRepo
) -> None:
    for _ in range(3):
        steps: list[dict[str, object]] = [{"name": "test", "run": f"{REPORT}; {KILLER} exit 0"}]
        result = _run(runner, make_repo, images["python"], steps)  # no SandboxError
        if result.status is not CIStatus.PASSED:  # the reader lost the race: the code's fault
            assert result.status is CIStatus.FAILED, result.error
            assert "own processes" in (result.error or ""), result.error


@pytest.mark.docker
@pytest.mark.usefixtures("no_containers_left")
@pytest.mark.parametrize("bomb", [BOMB, FILLER], ids=["bash-bomb", "refilling-forks"])
def test_a_fork_bomb_left_after_the_last_step_is_never_infrastructure(
    runner: CIRunner, images: dict[str, str], make_repo: MakeRepo, bomb: str
) -> None:
    for _ in range(3):
        steps: list[dict[str, object]] = [{"name": "test", "run": f"{REPORT}; {bomb} exit 0"}]
        result = _run(runner, make_repo, images["python"], steps)  # no SandboxError
        if result.status is not CIStatus.PASSED:
            assert result.status is CIStatus.FAILED, result.error
            assert "own processes" in (result.error or ""), result.error


def test_a_step_that_ran_out_of_workspace_says_so_and_how_to_raise_it() -> None:
    step = StepResult(
        name="Build and test",
        exit_code=1,
        duration_s=130.0,
        log="file INSTALL cannot copy file: No space left on device.\nninja: build stopped\n",
    )
    assert step_problem(step, Limits(disk_mb=2048)) == (
        "step 'Build and test' failed with exit code 1: No space left on device (the workspace"
        " holds 2048 MiB; ARENA_LIMITS disk_mb raises it)"
    )
