"""Workers killed at random, a step that kills its worker: nothing lost, nothing done twice."""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

import psycopg
import pytest
import yaml

from ci_runner import CISettings
from tests.arena.scripted_server import Reply, scripted_server
from tests.command import run_arena
from tests.servers import Postgres, Redis
from tests.workers.conftest import Workers, tasks_file, wait_for_status

pytestmark = pytest.mark.docker
TASKS = ["demo__py-ledger-split", "demo__py-textkit-slug"]
HALF_FIX = (
    "textkit/slug.py\n<<<<<<< SEARCH\n"
    '_UNSAFE = re.compile(r"[^a-z0-9]")\n=======\n_UNSAFE = re.compile(r"[^a-z0-9]+")\n>>>>>>> REPLACE\n'
)


def _models_file(path: Path, url: str, concurrency: int = 2) -> Path:
    spec = {
        "name": "m1",
        "base_url": url,
        "model": "scripted",
        "max_retries": 1,
        "timeout_s": 30,
        "max_concurrency": concurrency,
    }
    path.write_text(yaml.safe_dump({"models": [spec]}))
    return path


def _results(url: str) -> list[tuple[str, str, str, str]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT t.instance_id, m.a, m.b, m.result, m.status FROM matches m JOIN tasks t ON t.id = m.task_id"
        ).fetchall()
    assert {r[4] for r in rows} == {"done"}
    return sorted(
        (task, a, b, "tie" if r == "tie" else ("a" if r == a else "b")) for task, a, b, r, _ in rows
    )


def test_killing_workers_at_random_loses_nothing_and_bills_little(
    service_env: dict[str, str],
    workers: Workers,
    ci_settings: CISettings,
    images: dict[str, str],
    tmp_path: Path,
) -> None:
    spec = str(tasks_file(tmp_path / "tasks.jsonl", ci_settings.cache_dir, TASKS))
    models = "m1,oracle,null"
    # a half fix of textkit (its CI runs), no edit that applies to ledger
    answer = Reply(content=HALF_FIX)
    with scripted_server([], default=answer) as quick:
        results = tmp_path / "results.jsonl"
        alone = run_arena(
            [
                "tournament",
                "--tasks",
                spec,
                "--models",
                models,
                "--models-file",
                str(_models_file(tmp_path / "quick.yaml", quick.url)),
                "--results",
                str(results),
                "--json",
            ],
            service_env,
        )
        assert alone.returncode == 0, alone.stderr
        needed = len(quick.requests)
    expected = sorted(
        (r["task"], r["a"], r["b"], r["winner"])
        for r in map(json.loads, results.read_text().splitlines())
    )

    slow = Reply(content=answer.content, delay_s=3.0)  # one at a time: ~30 s of calls
    with scripted_server([], default=slow) as server:
        assert run_arena(["db", "migrate"], service_env).returncode == 0
        # random kills hit one step several times: more attempts than a poison step gets
        workers.env = {**service_env, "ARENA_STEP_ATTEMPTS": "12"}
        running = [workers.start(concurrency=3) for _ in range(2)]
        submitted = run_arena(
            [
                "submit",
                "--tasks",
                spec,
                "--models",
                models,
                "--models-file",
                str(_models_file(tmp_path / "slow.yaml", server.url, concurrency=1)),
            ],
            service_env,
        )
        assert submitted.returncode == 0, submitted.stderr
        tournament_id = int(submitted.stdout)
        rng = random.Random(7)
        born = [time.monotonic()] * len(running)
        kills = 0
        while kills < 20:
            time.sleep(rng.uniform(1.0, 4.0))
            victim = born.index(min(born))  # the oldest: booted, likely in the middle of a step
            Workers.kill(running[victim])
            kills += 1
            running[victim] = workers.start(concurrency=3)
            born[victim] = time.monotonic()
        state = wait_for_status(service_env, tournament_id, timeout=300)
        requests = len(server.requests)

    assert state["status"] == "done"
    assert _results(service_env["ARENA_DATABASE_URL"]) == expected
    with psycopg.connect(service_env["ARENA_DATABASE_URL"]) as conn:
        assert conn.execute("SELECT count(*) FROM answers").fetchone() == (4 * len(expected),)
        assert conn.execute("SELECT count(*) FROM rounds WHERE record IS NOT NULL").fetchone() == (
            2 * len(expected),
        )
        assert conn.execute("SELECT count(*) FROM answers WHERE model = 'm1'").fetchone() == (
            needed,
        )
    print(f"kills {kills}, answers needed {needed}, requested {requests}")
    assert needed <= requests <= needed + kills
    standings = {row["model"]: row for row in json.loads(alone.stdout)["standings"]}
    board = {
        row["model"]: (row["wins"], row["losses"], row["ties"]) for row in state["leaderboard"]
    }
    assert board == {m: (r["wins"], r["losses"], r["ties"]) for m, r in standings.items()}


def test_a_step_that_always_kills_its_worker_fails_its_match_and_the_rest_completes(
    service_env: dict[str, str],
    workers: Workers,
    ci_settings: CISettings,
    images: dict[str, str],
    tmp_path: Path,
) -> None:
    spec = str(tasks_file(tmp_path / "tasks.jsonl", ci_settings.cache_dir, TASKS[:1]))
    poisoned = [sys.executable, "-m", "tests.workers.poison"]
    assert run_arena(["db", "migrate"], service_env).returncode == 0
    env = {**service_env, "ARENA_STEP_ATTEMPTS": "2"}
    workers.env = env
    # one step per worker at a time: a threads-pool worker killed by the poison step takes the
    # steps running beside it down too, and two such deaths would fail the innocent match
    alone = [*poisoned, "worker", "--concurrency", "1"]
    running = [workers.start(args=alone) for _ in range(2)]
    submitted = run_arena(["submit", "--tasks", spec, "--models", "oracle,poison,null"], env)
    assert submitted.returncode != 0  # the plain CLI does not know the poison model
    import subprocess

    done = subprocess.run(
        [*poisoned, "submit", "--tasks", spec, "--models", "oracle,poison,null"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    tournament_id = int(done.stdout)

    def restart_dead() -> None:
        for i, proc in enumerate(running):
            if proc.poll() is not None:
                running[i] = workers.start(args=alone)

    state = wait_for_status(env, tournament_id, timeout=300, check=restart_dead)
    assert state["status"] == "done"
    with psycopg.connect(env["ARENA_DATABASE_URL"]) as conn:
        rows = conn.execute(
            "SELECT a, b, status, reason, fault, at_fault FROM matches ORDER BY id"
        ).fetchall()
    by_pair = {
        (a, b): (status, reason, fault, at_fault) for a, b, status, reason, fault, at_fault in rows
    }
    assert by_pair[("oracle", "null")][0] == "done" and by_pair[("oracle", "null")][2] is None
    for pair in (("oracle", "poison"), ("poison", "null")):
        status, reason, fault, at_fault = by_pair[pair]
        assert status == "failed"
        assert "failed after 2 attempts" in reason and "its worker died each time" in reason
        assert (fault, at_fault) == ("worker", None)  # the worker, not a model's endpoint


@pytest.mark.parametrize("server", ["redis", "postgres"])
def test_a_restarted_broker_or_database_loses_nothing(
    server: str,
    service_env: dict[str, str],
    workers: Workers,
    broker: Redis,
    postgres: Postgres,
    ci_settings: CISettings,
    images: dict[str, str],
    tmp_path: Path,
) -> None:
    spec = str(tasks_file(tmp_path / "tasks.jsonl", ci_settings.cache_dir, TASKS))
    slow = Reply(content="I do not know how to fix this.", delay_s=2.0)
    with scripted_server([], default=slow) as model:
        assert run_arena(["db", "migrate"], service_env).returncode == 0
        workers.start(concurrency=3)
        workers.start(concurrency=3)
        submitted = run_arena(
            [
                "submit",
                "--tasks",
                spec,
                "--models",
                "m1,oracle,null",
                "--models-file",
                str(_models_file(tmp_path / "m.yaml", model.url)),
            ],
            service_env,
        )
        assert submitted.returncode == 0, submitted.stderr
        time.sleep(3)
        restarted = broker if server == "redis" else postgres
        restarted.stop()
        time.sleep(3)
        restarted.start()
        state = wait_for_status(service_env, int(submitted.stdout), timeout=300)
    assert state["status"] == "done"
    matches = _results(service_env["ARENA_DATABASE_URL"])
    assert len(matches) == 3 * len(TASKS)
    with psycopg.connect(service_env["ARENA_DATABASE_URL"]) as conn:
        assert conn.execute("SELECT count(*) FROM answers").fetchone() == (4 * len(matches),)
    assert state["leaderboard_matches"] == len(matches)
