"""POST /api/tasks/import with hostile lines: each is one refused line with its reason (never a
500), kept for the corpus report, and the good lines import."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient

from ci_runner import CISettings
from tests.api.conftest import ADMIN, demo_jsonl

IDS = ["demo__py-ledger-split", "demo__py-textkit-slug"]


def _upload(client: TestClient, text: str):  # type: ignore[no-untyped-def]
    return client.post("/api/tasks/import", headers=ADMIN,
                       files={"file": ("tasks.jsonl", text.encode(), "application/x-ndjson")})  # fmt: skip


def test_a_deeply_nested_line_is_one_refused_line_and_the_others_import(
    client: TestClient, ci_settings: CISettings
) -> None:
    first, second = demo_jsonl(ci_settings.cache_dir, IDS).splitlines()
    tests_nested = {**json.loads(second), "instance_id": "nested", "FAIL_TO_PASS": "[" * 100_000}
    text = "\n".join([first, "[" * 100_000, json.dumps(tests_nested), second]) + "\n"
    answer = _upload(client, text)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert sorted(t["instance_id"] for t in body["imported"]) == sorted(IDS)
    assert [(e["line"], e["field"]) for e in body["errors"]] == [(2, "(line)"), (3, "FAIL_TO_PASS")]
    assert body["errors"][0]["problem"] == "JSON nested more than 64 levels deep"
    rows = client.get("/api/tasks/report", params={"stage": "refused"}).json()["rows"]
    assert {r["instance_id"]: r["category"] for r in rows} == {
        "tasks.jsonl:2": "dataset line inconsistent",
        "nested": "dataset line inconsistent",
    }


def test_base_commit_must_be_a_full_commit_id_and_image_one_arena_built(
    client: TestClient, ci_settings: CISettings
) -> None:
    (good,) = demo_jsonl(ci_settings.cache_dir, IDS[:1]).splitlines()
    record = json.loads(good)
    text = "\n".join([
        json.dumps({**record, "instance_id": "branch", "base_commit": "main"}),
        json.dumps({**record, "instance_id": "foreign", "image": "docker.io/evil/miner:latest"}),
        good,
    ]) + "\n"  # fmt: skip
    answer = _upload(client, text)
    assert answer.status_code == 200, answer.text
    errors = answer.json()["errors"]
    assert [(e["line"], e["field"]) for e in errors] == [(1, "base_commit"), (2, "image")]
    assert "full commit id" in errors[0]["problem"] and "'main'" in errors[0]["problem"]
    assert "is not an image Arena builds" in errors[1]["problem"]


def test_a_json_array_nested_100000_deep_is_a_4xx_naming_the_problem(client: TestClient) -> None:
    """As an array upload, and with `language` to fill (each line then read once more)."""
    for params in ({}, {"language": "python"}):
        answer = client.post(
            "/api/tasks/import",
            headers=ADMIN,
            params=params,
            files={"file": ("tasks.json", ("[" * 100_000).encode(), "application/json")},
        )
        assert answer.status_code == 422, answer.text
        assert "nested more than 64 levels deep" in answer.json()["detail"][0]["msg"]
