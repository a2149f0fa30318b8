"""The service under test: throwaway PostgreSQL and Redis, and `arena worker` processes."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from arena.tasks.demo import demo_tasks
from ci_runner import CISettings
from tests.command import ARENA, run_arena
from tests.servers import Redis, redis_server

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def broker() -> Iterator[Redis]:
    with redis_server() as server:
        yield server


@pytest.fixture
def service_env(database_url: str, broker: Redis, ci_settings: CISettings) -> dict[str, str]:
    """Short leases and reconciler periods, so recovery takes seconds in tests."""
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "ARENA_DATABASE_URL": database_url,
        "ARENA_BROKER_URL": broker.url,
        "ARENA_CACHE_DIR": str(ci_settings.cache_dir),
        "ARENA_STEP_LEASE_S": "6",
        "ARENA_RECONCILE_S": "2",
        "ARENA_STALL_S": "3",
        "ARENA_RATINGS_DEBOUNCE_S": "1",
        "ARENA_RATINGS_BOOTSTRAP": "50",
    }


class Workers:
    """`arena worker` processes, each in its own process group, all killed at the end."""

    def __init__(self, env: dict[str, str], logs: Path) -> None:
        self.env = env
        self.logs = logs
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(
        self,
        queues: str = "control,llm,ci",
        concurrency: int = 2,
        extra_env: dict[str, str] | None = None,
        args: list[str] | None = None,
    ) -> subprocess.Popen[bytes]:
        log = (self.logs / f"worker-{len(self.procs)}.log").open("wb")
        command = args or [ARENA, "worker", "--queues", queues, "--concurrency", str(concurrency)]
        proc = subprocess.Popen(
            command,
            env={**self.env, **(extra_env or {})},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.procs.append(proc)
        return proc

    @staticmethod
    def kill(proc: subprocess.Popen[bytes]) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    def stop_all(self, sweep: bool = True) -> None:
        for proc in self.procs:
            self.kill(proc)
        if sweep:
            run_arena(["ci", "sweep"], self.env)  # sandboxes of killed workers


@pytest.fixture
def workers(
    service_env: dict[str, str], tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Workers]:
    started = Workers(service_env, tmp_path)
    yield started
    # a test not marked `docker` starts no sandbox, so there is none to sweep (and the
    # sweep's Docker client would cost the fast lane a process start per test)
    started.stop_all(sweep=request.node.get_closest_marker("docker") is not None)


def wait_for_status(
    env: dict[str, str],
    tournament_id: int,
    timeout: float,
    check: Callable[[], None] = lambda: None,
) -> dict:  # type: ignore[type-arg]
    deadline = time.monotonic() + timeout
    while True:
        done = run_arena(["status", str(tournament_id), "--json"], env)
        assert done.returncode == 0, done.stderr
        state = json.loads(done.stdout)
        if state["status"] in ("done", "cancelled") and not state["matches"]["running"]:
            return state  # type: ignore[no-any-return]
        if time.monotonic() > deadline:
            raise AssertionError(f"tournament {tournament_id} did not end: {state}")
        check()
        time.sleep(1)


def tasks_file(path: Path, cache_dir: Path, ids: list[str]) -> Path:
    """Some demo tasks as a JSONL file (their repos materialized in the shared cache)."""
    chosen = [t for t in demo_tasks(cache_dir / "demo-repos") if t.instance_id in ids]
    path.write_text("".join(t.model_dump_json(by_alias=False) + "\n" for t in chosen))
    return path
