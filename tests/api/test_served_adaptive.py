"""An adaptive tournament played end to end: `arena serve`, real workers, Docker, baselines."""

from __future__ import annotations

import json
import time

import httpx
import psycopg
import pytest

from ci_runner import CISettings
from tests.api.conftest import demo_jsonl
from tests.api.test_served_tournament import ADMIN, TASKS, api_env, served  # noqa: F401
from tests.workers.conftest import Workers

pytestmark = pytest.mark.docker


def test_an_adaptive_tournament_stops_on_its_budget_with_its_matches_bounded(
    served: str,  # noqa: F811
    api_env: dict[str, str],  # noqa: F811
    workers: Workers,
    ci_settings: CISettings,
    images: dict[str, str],
) -> None:
    api = httpx.Client(base_url=served, timeout=120)
    workers.env = api_env
    workers.start("control,llm", 4)
    workers.start("ci", 2)
    corpus = demo_jsonl(ci_settings.cache_dir, TASKS)
    imported = api.post("/api/tasks/import", headers=ADMIN,
                        files={"file": ("demo.jsonl", corpus.encode())})  # fmt: skip
    assert imported.status_code == 200, imported.text
    started = api.post("/api/tournaments", headers=ADMIN, json={
        "models": ["oracle", "partial", "null"], "tasks": TASKS, "mode": "adaptive",
        "adaptive": {"goal": {"separate": True}, "budget": {"matches": 3}, "in_flight": 2}})  # fmt: skip
    assert started.status_code == 202, started.text
    tournament = started.json()["id"]
    events: list[dict[str, object]] = []
    with api.stream("GET", f"/api/tournaments/{tournament}/events", timeout=900) as stream:
        kind = ""
        for line in stream.iter_lines():
            if line.startswith("event: "):
                kind = line.removeprefix("event: ")
            elif line.startswith("data: "):
                events.append(json.loads(line.removeprefix("data: ")))
                if kind == "end":
                    break
    end = events[-1]
    assert end["status"] == "done", end
    adaptive = end["adaptive"]
    assert isinstance(adaptive, dict) and adaptive["stop_reason"] == "budget"
    assert end["progress"] == {"queued": 0, "running": 0, "done": 3, "failed": 0,  # type: ignore[comparison-overlap]
                               "skipped": 0, "cancelled": 0, "total": 3}  # fmt: skip
    assert adaptive["spent"]["matches"] == 3 and adaptive["spent"]["ci_seconds"] > 0
    assert adaptive["left"]["matches"] == 0
    flying = [e["progress"]["queued"] + e["progress"]["running"] for e in events]  # type: ignore[index]
    assert max(flying) <= 2
    with psycopg.connect(api_env["ARENA_DATABASE_URL"]) as conn:
        keys = conn.execute(
            "SELECT task_id, least(a, b), greatest(a, b) FROM matches WHERE tournament_id = %s",
            (tournament,),
        ).fetchall()
        ended = conn.execute(
            "SELECT stop_reason, finished_at IS NOT NULL FROM tournaments WHERE id = %s",
            (tournament,),
        ).fetchone()
    assert len(keys) == len(set(keys)) == 3 and ended == ("budget", True)
    deadline = time.monotonic() + 120  # the final ratings step runs after the end
    while (board := api.get("/api/leaderboard", params={"tournament": tournament}).json())[
        "match_count"
    ] != 3:
        assert time.monotonic() < deadline, board
        time.sleep(0.5)
    assert board["goal"] == {"target_width": None, "separate": True}
    assert sum(r["matches"] for r in board["rows"]) == 2 * 3
