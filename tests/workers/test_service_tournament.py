"""A tournament through the service equals `arena tournament` in one process."""

from __future__ import annotations

import json
import time
from pathlib import Path

import psycopg
import pytest
import yaml

from ci_runner import CISettings
from tests.arena.scripted_server import Reply, scripted_server
from tests.command import run_arena
from tests.workers.conftest import Workers, tasks_file, wait_for_status

pytestmark = pytest.mark.docker
TASKS = ["demo__py-ledger-split", "demo__py-textkit-slug"]


def test_the_service_plays_the_same_tournament_as_one_process(
    service_env: dict[str, str],
    workers: Workers,
    ci_settings: CISettings,
    images: dict[str, str],
    tmp_path: Path,
) -> None:
    spec = str(tasks_file(tmp_path / "tasks.jsonl", ci_settings.cache_dir, TASKS))
    models = "oracle,partial,null"
    results = tmp_path / "results.jsonl"
    alone = run_arena(
        ["tournament", "--tasks", spec, "--models", models, "--results", str(results), "--json"],
        service_env,
    )
    assert alone.returncode == 0, alone.stderr
    expected = sorted(
        (r["task"], r["a"], r["b"], r["winner"])
        for r in map(json.loads, results.read_text().splitlines())
    )

    assert run_arena(["db", "migrate"], service_env).returncode == 0
    workers.start("control,llm", 4)
    workers.start("ci", 2)
    submitted = run_arena(["submit", "--tasks", spec, "--models", models], service_env)
    assert submitted.returncode == 0, submitted.stderr
    tournament_id = int(submitted.stdout.strip())
    state = wait_for_status(service_env, tournament_id, timeout=600)
    assert state["status"] == "done" and state["matches"]["done"] == len(expected)

    with psycopg.connect(service_env["ARENA_DATABASE_URL"]) as conn:
        rows = conn.execute(
            "SELECT t.instance_id, m.a, m.b, m.result FROM matches m JOIN tasks t ON t.id = m.task_id"
        ).fetchall()
        answers = conn.execute("SELECT count(*) FROM answers").fetchone()
        rounds = conn.execute("SELECT count(*) FROM rounds WHERE record IS NOT NULL").fetchone()
        prepared = conn.execute("SELECT attempts FROM steps WHERE key LIKE 'prepare:%'").fetchall()
        scopes = conn.execute(
            "SELECT DISTINCT scope, scope_value FROM rating_snapshots"
            " WHERE tournament_id = %s AND match_count = %s",
            (tournament_id, len(expected)),
        ).fetchall()
    got = sorted(
        (task, a, b, "tie" if r == "tie" else ("a" if r == a else "b")) for task, a, b, r in rows
    )
    assert got == expected
    assert answers == (4 * len(expected),) and rounds == (2 * len(expected),)
    plain = sorted(s for s in scopes if s[1].endswith("|*"))
    assert plain == [  # language|kind|window, * for all (one task kind, one language)
        ("board", "*|*|*"),
        ("board", "*|gold-judged|*"),
        ("board", "python|*|*"),
        ("board", "python|gold-judged|*"),
    ]
    # each again over tasks opened after the models' knowledge cutoffs: baselines have none
    assert sorted(s[1].rsplit("|", 1)[0] for s in scopes if "|cutoff:" in s[1]) == [
        v.rsplit("|", 1)[0] for _, v in plain
    ]
    assert prepared == [(1,)] * len(TASKS)  # validated once per task, though 3 matches waited
    shown = run_arena(["status", str(tournament_id)], service_env)
    assert shown.returncode == 0 and f"leaderboard after {len(expected)} matches" in shown.stdout
    assert all(model in shown.stdout for model in models.split(","))
    standings = {row["model"]: row for row in json.loads(alone.stdout)["standings"]}
    board = {row["model"]: row for row in state["leaderboard"]}
    assert state["leaderboard_matches"] == len(expected)
    for model, row in standings.items():
        assert (board[model]["wins"], board[model]["losses"], board[model]["ties"]) == (
            row["wins"],
            row["losses"],
            row["ties"],
        )


def test_cancel_stops_scheduling_the_remaining_matches(
    service_env: dict[str, str],
    workers: Workers,
    ci_settings: CISettings,
    images: dict[str, str],
    tmp_path: Path,
) -> None:
    spec = str(tasks_file(tmp_path / "tasks.jsonl", ci_settings.cache_dir, TASKS))
    with scripted_server([], default=Reply(content="no idea", delay_s=3.0)) as model:
        models_file = tmp_path / "m.yaml"
        models_file.write_text(
            yaml.safe_dump(
                {
                    "models": [
                        {"name": "m1", "base_url": model.url, "model": "x", "max_concurrency": 1}
                    ]
                }
            )
        )
        assert run_arena(["db", "migrate"], service_env).returncode == 0
        workers.start(concurrency=2)
        submitted = run_arena(
            [
                "submit",
                "--tasks",
                spec,
                "--models",
                "m1,oracle,null",
                "--models-file",
                str(models_file),
            ],
            service_env,
        )
        assert submitted.returncode == 0, submitted.stderr
        tournament_id = int(submitted.stdout)
        while (
            json.loads(
                run_arena(["status", submitted.stdout.strip(), "--json"], service_env).stdout
            )["matches"]["done"]
            == 0
        ):
            time.sleep(0.5)
        cancelled = run_arena(["cancel", str(tournament_id)], service_env)
        assert cancelled.returncode == 0, cancelled.stderr
        count = int(cancelled.stdout.split(": ")[1].split()[0])
        state = wait_for_status(service_env, tournament_id, timeout=60)
        time.sleep(8)  # steps in flight complete; nothing after them may be scheduled
        requests_then = len(model.requests)
        time.sleep(4)
        assert len(model.requests) == requests_then
    counts = state["matches"]
    assert state["status"] == "cancelled" and count > 0
    assert counts["cancelled"] == count and counts["done"] == 3 * len(TASKS) - count
    with psycopg.connect(service_env["ARENA_DATABASE_URL"]) as conn:
        statuses = conn.execute("SELECT DISTINCT status FROM matches").fetchall()
        judged_late = conn.execute(
            "SELECT count(*) FROM matches m JOIN rounds r ON r.match_id = m.id"
            " WHERE m.status = 'cancelled' AND r.finished_at > m.finished_at + interval '10 seconds'"
        ).fetchone()
    assert sorted(statuses) == [("cancelled",), ("done",)] and judged_late == (0,)
    assert run_arena(["cancel", "999"], service_env).returncode == 2
