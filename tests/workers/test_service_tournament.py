"""A tournament through the service equals `arena tournament` in one process."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from ci_runner import CISettings
from tests.workers.conftest import Workers, arena, tasks_file, wait_for_status

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
    alone = arena(
        ["tournament", "--tasks", spec, "--models", models, "--results", str(results), "--json"],
        service_env,
        timeout=600,
    )
    assert alone.returncode == 0, alone.stderr
    expected = sorted(
        (r["task"], r["a"], r["b"], r["winner"])
        for r in map(json.loads, results.read_text().splitlines())
    )

    assert arena(["db", "migrate"], service_env).returncode == 0
    workers.start("control,llm", 4)
    workers.start("ci", 2)
    submitted = arena(["submit", "--tasks", spec, "--models", models], service_env)
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
    got = sorted(
        (task, a, b, "tie" if r == "tie" else ("a" if r == a else "b")) for task, a, b, r in rows
    )
    assert got == expected
    assert answers == (4 * len(expected),) and rounds == (2 * len(expected),)
    standings = {row["model"]: row for row in json.loads(alone.stdout)["standings"]}
    board = {row["model"]: row for row in state["leaderboard"]}
    assert state["leaderboard_matches"] == len(expected)
    for model, row in standings.items():
        assert (board[model]["wins"], board[model]["losses"], board[model]["ties"]) == (
            row["wins"],
            row["losses"],
            row["ties"],
        )
