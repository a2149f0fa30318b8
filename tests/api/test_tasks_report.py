"""GET /api/tasks/report: refused import lines are kept in PostgreSQL and reported beside the
library's tasks, each at the stage it reached; counts, filters and the CSV export."""

from __future__ import annotations

import csv
import io
import json

from fastapi.testclient import TestClient

from api.core.config import ApiSettings
from arena.store.matches import store_validation
from arena.store.pool import open_pool
from arena.store.tasks import get_task
from arena.tasks.schema import Task, Validation
from ci_runner import CISettings
from tests.api.conftest import ADMIN, demo_jsonl

IDS = ["demo__py-ledger-split", "demo__py-textkit-slug"]


def _upload(client: TestClient, text: str, name: str = "go_filtered_instance_list.jsonl"):  # type: ignore[no-untyped-def]
    return client.post("/api/tasks/import", params={"check": False}, headers=ADMIN,
                       files={"file": (name, text.encode(), "application/x-ndjson")})  # fmt: skip


def _rows(client: TestClient, **params: str) -> dict[str, tuple[str, str | None]]:
    body = client.get("/api/tasks/report", params=params).json()
    return {r["instance_id"]: (r["stage"], r["category"]) for r in body["rows"]}


def test_refused_lines_are_kept_and_reported_beside_the_tasks_until_they_import(
    client: TestClient, ci_settings: CISettings, api_settings: ApiSettings
) -> None:
    good = demo_jsonl(ci_settings.cache_dir, IDS).splitlines()
    go_line = {"instance_id": "go-1", "repo": "o/r", "language": "go", "ci_name_list": ["t"]}
    text = "\n".join([*good, "{not json", json.dumps(go_line)]) + "\n"  # go-1 lacks base_commit
    assert _upload(client, text).status_code == 200

    assert _rows(client) == {
        IDS[0]: ("imported", "pipeline not derived"),  # from its CI job, when validated
        IDS[1]: ("environment built", "not yet validated"),  # its own pipeline needs no setup
        "go-1": ("refused", "dataset line inconsistent"),
        "go_filtered_instance_list.jsonl:3": ("refused", "dataset line inconsistent"),
    }
    body = client.get("/api/tasks/report").json()
    assert body["stages"] == ["refused", "imported", "environment built", "validated", "playable"]
    go = next(c for c in body["by_language"] if c["language"] == "go")
    assert go == {"language": "go", "total": 1,  # the line that is not JSON names none
                  "stages": {"refused": 1, "imported": 0, "environment built": 0,
                             "validated": 0, "playable": 0}}  # fmt: skip
    refused = next(r for r in body["rows"] if r["instance_id"] == "go-1")
    assert refused["reason"].startswith("go_filtered_instance_list.jsonl line 4: base_commit")
    assert refused["repo"] == "o/r" and refused["source_file"] == "go_filtered_instance_list.jsonl"

    pool = open_pool(api_settings.database_url)
    try:
        row = get_task(pool, IDS[0])
        assert row is not None
        task = Task.model_validate(row["task"])
        verdict = Validation(valid=True, fail_to_pass=("t",), fingerprint=task.fingerprint())
        store_validation(pool, int(row["id"]), task, verdict)
    finally:
        pool.close()
    assert _rows(client, stage="playable") == {IDS[0]: ("playable", None)}
    assert client.get("/api/tasks/report", params={"stage": "playable"}).json()["total"] == 4

    fixed = {**go_line, "base_commit": "abcdef0" + "0" * 33}
    assert _upload(client, json.dumps(fixed) + "\n").status_code == 200  # the same file again
    assert _rows(client, language="go") == {"go-1": ("imported", "pipeline not derived")}
    assert _rows(client, stage="refused") == {}  # the file's unkeyed refusals went with it


def test_a_file_with_no_good_line_is_refused_and_its_lines_still_kept(client: TestClient) -> None:
    answer = _upload(client, json.dumps({"instance_id": "x", "language": "rust"}) + "\n", "x.jsonl")
    assert answer.status_code == 422
    assert _rows(client) == {"x": ("refused", "dataset line inconsistent")}
    hostile = json.dumps({"instance_id": "nul\x00\ud800", "language": "go"}) + "\n{\x00\n"
    assert _upload(client, hostile, "y.jsonl").status_code == 422  # refused, and kept
    assert set(_rows(client)) == {"x", "nul\ufffd?", "y.jsonl:2"}


def test_csv_export_is_a_file_of_the_chosen_rows(
    client: TestClient, ci_settings: CISettings
) -> None:
    good = demo_jsonl(ci_settings.cache_dir, IDS[:1])
    assert _upload(client, good + "{not json\n").status_code == 200
    answer = client.get("/api/tasks/report", params={"format": "csv", "stage": "refused"})
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/csv")
    assert answer.headers["content-disposition"] == (
        'attachment; filename="corpus-report_refused.csv"'
    )
    rows = list(csv.DictReader(io.StringIO(answer.text)))
    assert [(r["instance_id"], r["stage"], r["category"]) for r in rows] == [
        ("go_filtered_instance_list.jsonl:2", "refused", "dataset line inconsistent")
    ]
    assert client.get("/api/tasks/report", params={"stage": "nope"}).status_code == 422
