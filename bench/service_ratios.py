"""The service against one process, in one run (throwaway PostgreSQL and Redis).

1. Throughput: the demo tournament (oracle, partial, null) through the service (a CI worker of
   concurrency 2) against `arena tournament --jobs 2`, both with cold caches. Target <= 1.15x.
   Beside it, how busy the CI slots were: sandbox seconds over wall seconds times slots.
2. Latency hiding: with a scripted endpoint answering in 10 s, 16 matches against one match.
   Target <= 1.5x.

Run: python bench/service_ratios.py [--skip-throughput]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import psycopg
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ci_runner.providers.docker.sandbox import LABEL  # noqa: E402
from tests.arena.scripted_server import Reply, scripted_server  # noqa: E402
from tests.servers import postgres_server, redis_server  # noqa: E402
from tests.workers.conftest import ARENA, tasks_file  # noqa: E402

PY_TASK = "demo__py-textkit-slug"
CGROUP = Path("/sys/fs/cgroup")
# one cgroup above every container (cgroupfs driver), removed containers' time included:
# cgroup v1 (cpuacct.usage, ns) and v2 (cpu.stat usage_usec)
ENGINE_CGROUPS = ("cpuacct/docker/cpuacct.usage", "docker/cpu.stat")
# one cgroup per container (systemd driver): gone with the container, so they are sampled
SCOPE_GLOBS = (
    "cpuacct/system.slice/docker-*.scope/cpuacct.usage",
    "system.slice/docker-*.scope/cpu.stat",
)


def cpu_usage_s(path: Path) -> float | None:
    """Seconds of CPU in a cgroup v1 `cpuacct.usage` or v2 `cpu.stat`; None if unreadable."""
    try:
        text = path.read_text()
    except OSError:
        return None
    if path.name == "cpuacct.usage":
        return int(text) / 1e9
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == "usage_usec":
            return int(value) / 1e6
    return None


def container_cgroups(root: Path, container_id: str) -> tuple[Path, ...]:
    """Where one container's CPU count lives: cgroup v1 or v2, cgroupfs or systemd driver."""
    return (
        root / "cpuacct/docker" / container_id / "cpuacct.usage",
        root / f"cpuacct/system.slice/docker-{container_id}.scope/cpuacct.usage",
        root / "docker" / container_id / "cpu.stat",
        root / f"system.slice/docker-{container_id}.scope/cpu.stat",
    )


class ContainerCPU:
    """CPU seconds containers used between `start` and `stop`.

    Given `containers` (the ids of those to count, asked each period), their cgroups are
    sampled. Otherwise every container of the engine: where one cgroup holds them all
    (cgroupfs driver), two readings of it; else (systemd driver: a scope per container)
    the scopes are sampled. A sampled container's last period, and any container shorter
    than a period, are missed: the figure is then a lower bound (`exact` is False).
    """

    def __init__(
        self,
        root: Path = CGROUP,
        period_s: float = 0.2,
        containers: Callable[[], list[str]] | None = None,
    ) -> None:
        self._root = root
        self._period_s = period_s
        self._containers = containers
        self._engine = (
            None
            if containers is not None
            else next((root / p for p in ENGINE_CGROUPS if cpu_usage_s(root / p) is not None), None)
        )
        self.exact = self._engine is not None
        self._first: dict[Path, float] = {}
        self._last: dict[Path, float] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._engine_start = 0.0

    def _paths(self) -> list[Path]:
        if self._containers is None:
            return [path for pattern in SCOPE_GLOBS for path in self._root.glob(pattern)]
        return [p for cid in self._containers() for p in container_cgroups(self._root, cid)]

    def _sample(self) -> None:
        for path in self._paths():
            used = cpu_usage_s(path)
            if used is not None:
                self._first.setdefault(path, used if self._thread is None else 0.0)
                self._last[path] = used

    def _run(self) -> None:
        while not self._stop.wait(self._period_s):
            try:
                self._sample()
            except Exception as exc:  # the engine busy: this period is missed, not the run
                print(f"container CPU sample failed: {exc}", file=sys.stderr)

    def start(self) -> None:
        if self._engine is not None:
            self._engine_start = cpu_usage_s(self._engine) or 0.0
            return
        self._sample()  # containers already running count from now
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self) -> float | None:
        """The CPU seconds used; None where no container cgroup was found."""
        if self._engine is not None:
            end = cpu_usage_s(self._engine)
            return None if end is None else end - self._engine_start
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._sample()
        if not self._last:
            return None
        return sum(self._last[p] - self._first[p] for p in self._last)


def _env(database_url: str, broker_url: str, cache: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "ARENA_DATABASE_URL": database_url,
        "ARENA_BROKER_URL": broker_url,
        "ARENA_CACHE_DIR": str(cache),
        "ARENA_RATINGS_BOOTSTRAP": "100",
        "ARENA_RECONCILE_S": "5",
        "ARENA_STALL_S": "30",
    }


def _workers(
    env: dict[str, str], specs: list[tuple[str, int]], logs: Path
) -> list[subprocess.Popen[bytes]]:
    procs = []
    for n, (queues, concurrency) in enumerate(specs):
        log = (logs / f"worker-{n}.log").open("wb")
        procs.append(
            subprocess.Popen(
                [ARENA, "worker", "--queues", queues, "--concurrency", str(concurrency)],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
    subprocess.run([ARENA, "db", "migrate"], env=env, check=True, capture_output=True)
    time.sleep(3)  # workers connected
    return procs


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        os.killpg(proc.pid, 9)
        proc.wait()


def _submit(env: dict[str, str], *args: str) -> int:
    done = subprocess.run(
        [ARENA, "submit", *args], env=env, check=True, capture_output=True, text=True
    )
    return int(done.stdout)


def _wait_done(database_url: str, tournament_id: int, timeout: float) -> None:
    """Polls the store in this process: an `arena status` per second would take CPU from the
    sandboxes being timed (a CLI start-up is about a core-second)."""
    deadline = time.monotonic() + timeout
    with psycopg.connect(database_url, autocommit=True) as conn:
        while True:
            row = conn.execute(
                "SELECT status FROM tournaments WHERE id = %s", (tournament_id,)
            ).fetchone()
            if row is not None and row[0] in ("done", "cancelled"):
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"tournament {tournament_id} did not end: {row}")
            time.sleep(0.2)


def _load() -> str:
    """Other work on the machine skews every ratio here: shown beside each figure."""
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} cores"


def _containers_of(pid: int) -> Callable[[], list[str]]:
    """The ids of the running sandboxes a process started (their label names its pid)."""
    import docker

    client = docker.from_env()

    def ids() -> list[str]:
        # sparse: no inspection of each, which fails for one removed meanwhile
        found = client.containers.list(sparse=True, filters={"label": f"{LABEL}.pid={pid}"})
        return [str(c.id) for c in found]

    return ids


def _utilization(label: str, used: float | None, wall: float, exact: bool) -> str:
    cores = os.cpu_count() or 1
    if used is None:
        return f"{label}: no container cgroup found (cgroup v1 or v2, either driver)"
    bound = "" if exact else " (sampled: a lower bound)"
    return (
        f"{label}: {used:.1f} container CPU s / ({wall:.1f} s x {cores} cores)"
        f" = {used / (wall * cores):.0%}{bound}"
    )


def throughput(pg_url: str, broker_url: str, work: Path) -> None:
    models = "oracle,partial,null"
    alone_env = {**os.environ, "ARENA_CACHE_DIR": str(work / "alone-cache")}
    everything = ContainerCPU()
    everything.start()
    started = time.monotonic()
    one = subprocess.Popen(
        [ARENA, "tournament", "--tasks", "demo", "--models", models, "--jobs", "2", "--json"],
        env=alone_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    one_cpu = ContainerCPU(containers=_containers_of(one.pid))
    one_cpu.start()
    if one.wait() != 0:
        raise SystemExit(f"arena tournament failed ({one.returncode})")
    alone = time.monotonic() - started
    alone_used, alone_all = one_cpu.stop(), everything.stop()

    env = _env(pg_url, broker_url, work / "service-cache")
    procs = _workers(env, [("control,llm", 4), ("ci", 2)], work)
    try:
        ci_cpu = ContainerCPU(containers=_containers_of(procs[1].pid))
        everything = ContainerCPU()
        everything.start()
        ci_cpu.start()
        started = time.monotonic()
        tournament = _submit(env, "--tasks", "demo", "--models", models)
        _wait_done(pg_url, tournament, timeout=3600)
        service = time.monotonic() - started
        service_used, service_all = ci_cpu.stop(), everything.stop()
    finally:
        _stop(procs)
    with psycopg.connect(pg_url) as conn:
        row = conn.execute("SELECT sum(duration_s) FROM ci_runs").fetchone()
    sandbox_s = float(row[0] or 0.0) if row else 0.0
    print(
        f"throughput: one process --jobs 2 {alone:.1f}s, service (ci x2) {service:.1f}s, "
        f"ratio {service / alone:.2f}x (target <= 1.15x); {_load()}"
    )
    print(
        f"CI slots busy: {sandbox_s:.1f} sandbox s / ({service:.1f} s x 2 slots) = "
        f"{sandbox_s / (2 * service):.0%}"
    )
    print(_utilization("CI queue CPU utilization", service_used, service, ci_cpu.exact))
    print(_utilization("one process's sandboxes, for comparison", alone_used, alone, False))
    exact = everything.exact
    print(_utilization("every container on the engine, service run", service_all, service, exact))
    print(_utilization("every container on the engine, one-process run", alone_all, alone, exact))


def latency_hiding(pg_url: str, broker_url: str, work: Path) -> None:
    """16 matches in one tournament: 16 copies of one task (validated once by content)."""
    cache = work / "latency-cache"
    cache.mkdir()
    line = tasks_file(work / "task.jsonl", cache, [PY_TASK]).read_text().strip()
    copies = [json.dumps({**json.loads(line), "instance_id": f"{PY_TASK}-{k}"}) for k in range(16)]
    one_file, many_file = work / "one.jsonl", work / "many.jsonl"
    one_file.write_text(copies[0] + "\n")
    many_file.write_text("\n".join(copies) + "\n")
    env = _env(pg_url, broker_url, cache)
    with scripted_server([], default=Reply(content="no idea", delay_s=10.0)) as server:
        models_file = work / "models.yaml"
        spec = {"name": "m1", "base_url": server.url, "model": "slow", "max_concurrency": 64}
        models_file.write_text(yaml.safe_dump({"models": [spec]}))
        procs = _workers(env, [("control,ci", 2), ("llm", 40)], work)
        try:
            warm = _submit(env, "--tasks", str(many_file), "--models", "oracle,null")
            _wait_done(pg_url, warm, timeout=900)  # validations, images, retrieval
            timed = []
            for tasks in (one_file, many_file):
                started = time.monotonic()
                tournament = _submit(
                    env,
                    "--tasks",
                    str(tasks),
                    "--models",
                    "m1,null",
                    "--models-file",
                    str(models_file),
                )
                _wait_done(pg_url, tournament, timeout=900)
                timed.append(time.monotonic() - started)
        finally:
            _stop(procs)
    single, sixteen = timed
    print(
        f"latency hiding (10 s endpoint): 1 match {single:.1f}s, 16 matches {sixteen:.1f}s, "
        f"ratio {sixteen / single:.2f}x (target <= 1.5x); {_load()}"
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, postgres_server() as pg:
        work = Path(tmp)
        with redis_server(work / "redis") as broker:
            latency_hiding(pg.new_database(), broker.url, work)
        if "--skip-throughput" not in sys.argv:
            with redis_server(work / "redis2") as broker:
                throughput(pg.new_database(), broker.url, work)


if __name__ == "__main__":
    main()
