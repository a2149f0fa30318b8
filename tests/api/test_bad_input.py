"""Tasks and tournaments: bad input gets a 4xx naming the field and the problem."""

from __future__ import annotations

import json
from typing import get_args

from fastapi.testclient import TestClient

from api.schema_file import SCHEMA_FILE, render, served_schema
from api.schemas.matches import StatusFilter
from arena.tasks.demo import demo_sources
from arena.vocabulary import MatchStatus
from ci_runner import CISettings
from tests.api.conftest import ADMIN, demo_jsonl

IDS = ["demo__py-ledger-split", "demo__py-textkit-slug"]
DEMO_TASKS = len(demo_sources())


def _upload(client: TestClient, text: str, **params: object):  # type: ignore[no-untyped-def]
    return client.post("/api/tasks/import", params=params, headers=ADMIN,
                       files={"file": ("tasks.jsonl", text.encode(), "application/x-ndjson")})  # fmt: skip


def test_a_malformed_line_is_reported_with_its_number_and_good_lines_import(
    client: TestClient, ci_settings: CISettings
) -> None:
    good = demo_jsonl(ci_settings.cache_dir, IDS).splitlines()
    record = json.loads(good[1])
    del record["language"]
    text = "\n".join([good[0], "{not json", json.dumps({**record, "base_commit": ""}),
                      json.dumps(record)]) + "\n"  # fmt: skip
    report = _upload(client, text, language="python")
    assert report.status_code == 200, report.text
    body = report.json()
    assert sorted(t["instance_id"] for t in body["imported"]) == sorted(IDS)
    assert [(e["line"], e["field"]) for e in body["errors"]] == [(2, "(line)"), (3, "base_commit")]
    assert [t["instance_id"] for t in client.get("/api/tasks").json()["tasks"]] == sorted(IDS)
    assert client.get("/api/tasks", params={"language": "go"}).json()["total"] == 0
    shown = client.get(f"/api/tasks/{IDS[0]}").json()
    assert shown["validity"] == "unvalidated" and shown["kind"] == "gold-judged"
    again = _upload(client, good[0] + "\n")
    assert again.json()["imported"] == [{"instance_id": IDS[0], "new": False}]
    nothing = _upload(client, "{}\n")
    assert nothing.status_code == 422
    assert nothing.json()["detail"][0]["loc"][:3] == ["body", "file", "line 1"]
    missing = client.post("/api/tasks/import", headers=ADMIN)
    assert missing.status_code == 422 and missing.json()["detail"][0]["loc"] == ["body", "file"]


def test_tournaments_refuse_unknown_models_and_tasks_and_lone_models(client: TestClient) -> None:
    def start(body: dict[str, object]) -> tuple[int, dict[str, object]]:
        answer = client.post("/api/tournaments", json=body, headers=ADMIN)
        detail = answer.json()["detail"][0] if answer.status_code >= 400 else {}
        return answer.status_code, detail

    code, detail = start({"models": ["oracle"]})
    assert (
        code == 422 and detail["loc"] == ["body", "models"] and "at least 2" in str(detail["msg"])
    )
    code, detail = start({"models": ["oracle", "ghost"]})
    assert code == 422 and detail["loc"] == ["body", "models"] and "ghost" in str(detail["msg"])
    code, detail = start({"models": ["oracle", "oracle"]})
    assert code == 422 and "named twice" in str(detail["msg"])
    code, detail = start({"models": ["oracle", "null"], "tasks": ["demo__nope"]})
    assert code == 422 and detail["loc"] == ["body", "tasks"] and "demo__nope" in str(detail["msg"])
    code, detail = start({"models": ["oracle", "null"], "tasks": {"language": "rust"}})
    assert code == 422 and detail["loc"] == ["body", "tasks"]
    code, detail = start({"models": ["oracle", "null"], "settings": {"context_budget_tokens": 1}})
    assert code == 422 and detail["loc"] == ["body", "settings", "context_budget_tokens"]
    assert client.get("/api/tournaments").json()["total"] == 0
    assert client.get("/api/tournaments/12").status_code == 404
    assert client.get("/api/matches/12").json()["detail"][0]["loc"] == ["path", "match_id"]
    both_windows = {"after_cutoff": "true", "created_after": "2026-01-01"}
    assert client.get("/api/leaderboard", params=both_windows).status_code == 422


def test_a_tournament_is_recorded_with_its_settings(client: TestClient) -> None:
    started = client.post("/api/tournaments", headers=ADMIN, json={
        "models": ["oracle", "null", "partial"], "tasks": "demo",
        "settings": {"context_budget_tokens": 32000}})  # fmt: skip
    assert started.status_code == 202, started.text
    body = started.json()
    assert body["settings"] == {"context_budget_tokens": 32000} and body["status"] == "running"
    assert body["progress"]["total"] == body["progress"]["queued"] == 3 * DEMO_TASKS
    listed = client.get("/api/matches", params={"tournament": body["id"], "model": "partial"})
    assert listed.json()["total"] == 2 * DEMO_TASKS
    cancelled = client.post(f"/api/tournaments/{body['id']}/cancel", headers=ADMIN)
    assert cancelled.json() == {"id": body["id"], "cancelled_matches": 3 * DEMO_TASKS}
    with client.stream("GET", f"/api/tournaments/{body['id']}/events") as events:
        text = "".join(events.iter_text())
    assert (
        "event: progress" in text
        and "event: end" in text
        and f'"cancelled":{3 * DEMO_TASKS}' in text
    )


def test_the_committed_openapi_file_is_what_the_app_serves(client: TestClient) -> None:
    served = client.get("/api/openapi.json").json()
    assert render(served) == render(served_schema())
    assert SCHEMA_FILE.read_text() == render(served), "run: python -m api.schema_file"


def test_the_match_list_filters_by_exactly_the_match_statuses() -> None:
    """The filter's values are plain strings (a refusal names them): the store's, no other."""
    assert list(get_args(StatusFilter)) == [s.value for s in MatchStatus]
