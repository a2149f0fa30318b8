"""A model whose endpoint refuses the configuration: its match fails with that model at fault,
shown by the match endpoints, /api/results.jsonl and the tournament (real PostgreSQL, Redis,
`arena worker` processes and an OpenAI-compatible server on 127.0.0.1 that answers 401)."""

from __future__ import annotations

import json
import time

import psycopg
from fastapi.testclient import TestClient

from api.core.config import ApiSettings
from arena.ratings.results_file import parse_results_lines
from arena.store.matches import load_task, store_validation
from arena.store.pool import open_pool
from arena.tasks.schema import Validation
from ci_runner import CISettings
from tests.api.conftest import ADMIN, SECRET, demo_jsonl
from tests.api.test_models import CANARY
from tests.arena.scripted_server import Reply, scripted_server
from tests.workers.conftest import Workers

TASK = "demo__py-textkit-slug"
REFUSED = Reply(status=401, body='{"error": {"message": "Incorrect API key provided"}}')


def _validated(api_settings: ApiSettings, instance_id: str) -> None:
    """Known valid beforehand: its CI runs are not what this test is about, and the endpoint
    is called (and fails) before any of them, so no Docker engine is needed."""
    pool = open_pool(api_settings.database_url, max_size=1)
    try:
        with pool.connection() as conn:
            row = conn.execute("SELECT id FROM tasks WHERE instance_id = %s", (instance_id,))
            task_id = int(row.fetchone()["id"])  # type: ignore[index]
        task = load_task(pool, task_id)
        verdict = Validation(valid=True, fail_to_pass=("tests/test_slug.py::test_slug",),
                             fingerprint=task.fingerprint())  # fmt: skip
        store_validation(pool, task_id, task, verdict)
    finally:
        pool.close()


def test_an_endpoint_refusing_the_configuration_fails_the_match_with_its_model_at_fault(
    client: TestClient,
    api_settings: ApiSettings,
    service_env: dict[str, str],
    workers: Workers,
    ci_settings: CISettings,
) -> None:
    workers.env = {**service_env, "ARENA_SECRET_KEY": SECRET, "ARENA_STEP_ATTEMPTS": "2"}
    workers.start("control,llm", 2)
    with scripted_server([], default=REFUSED) as endpoint:
        created = client.post("/api/models", headers=ADMIN, json={
            "name": "m1", "base_url": endpoint.url, "model": "x", "api_key": CANARY})  # fmt: skip
        assert created.status_code == 201, created.text
        corpus = demo_jsonl(ci_settings.cache_dir, [TASK])
        imported = client.post("/api/tasks/import", headers=ADMIN,
                               files={"file": ("t.jsonl", corpus.encode())})  # fmt: skip
        assert imported.status_code == 200, imported.text
        _validated(api_settings, TASK)
        started = client.post("/api/tournaments", headers=ADMIN,
                              json={"models": ["m1", "oracle"], "tasks": [TASK]})  # fmt: skip
        assert started.status_code == 202, started.text
        tournament = started.json()["id"]
        deadline = time.monotonic() + 120
        while (shown := client.get(f"/api/tournaments/{tournament}").json())["status"] != "done":
            assert time.monotonic() < deadline, f"the tournament did not end: {shown}"
            time.sleep(0.5)
        calls = len(endpoint.requests)
    assert calls >= 2  # each attempt of the step asked once: a 401 is not retried in the player
    assert shown["progress"]["failed"] == 1 and shown["progress"]["done"] == 0

    listed = client.get("/api/matches", params={"tournament": tournament}).json()["matches"]
    assert [(m["status"], m["fault"], m["at_fault"]) for m in listed] == [
        ("failed", "model_endpoint", "m1")
    ]
    match = client.get(f"/api/matches/{listed[0]['id']}").json()
    assert (match["status"], match["fault"], match["at_fault"]) == (
        "failed",
        "model_endpoint",
        "m1",
    )
    assert "failed after 2 attempts" in match["reason"] and "HTTP 401" in match["reason"]
    assert "model m1's endpoint is at fault" in match["reason"]
    failed = client.get("/api/matches", params={"status": "failed", "model": "oracle"}).json()
    assert [m["at_fault"] for m in failed["matches"]] == ["m1"]  # oracle played, m1 failed it

    results = client.get("/api/results.jsonl", params={"tournament": tournament})
    lines = [json.loads(line) for line in results.text.splitlines()]
    assert [(r["a"], r["b"], r["at_fault"], r["fault"]) for r in lines] == [
        ("m1", "oracle", "m1", "model_endpoint")
    ]
    assert lines[0]["failed"] == match["reason"] and lines[0]["match"] == match["id"]
    parsed = parse_results_lines(results.text.splitlines())  # as `arena ratings` reads it
    assert parsed.failed == 1 and not parsed.matches and not parsed.errors

    # the tournament reports the model loudly, as `arena tournament` does
    assert shown["models_at_fault"] == [
        {"model": "m1", "matches": 1, "last_reason": match["reason"]}
    ]
    board = client.get("/api/leaderboard", params={"tournament": tournament}).json()
    assert board["match_count"] == 0  # never rated as if it had answered nothing
    every = client.get("/api/tournaments").json()["tournaments"]
    assert every[0]["models_at_fault"] == shown["models_at_fault"]
    with psycopg.connect(api_settings.database_url) as conn:
        assert conn.execute("SELECT count(*) FROM answers WHERE model = 'm1'").fetchone() == (0,)
        step = conn.execute(
            "SELECT status FROM steps WHERE key LIKE 'answer:%%' AND error LIKE '%%HTTP 401%%'"
        ).fetchall()
    assert ("failed",) in step  # given up after its last attempt, never taken again
    assert CANARY not in results.text and CANARY not in json.dumps(match)
