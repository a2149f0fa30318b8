"""`arena tasks report` as a user runs it: refused import lines kept beside the library, a table,
JSON and a CSV file; a later good import of the instance clears its refusal."""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

from arena.tasks.refusals import read_refusals, refusals_path
from ci_runner import CISettings
from tests.ci_runner.projects import PYTHON
from tests.command import run_arena
from tests.conftest import MakeRepo


def _arena(args: list[str], cache: Path) -> subprocess.CompletedProcess[str]:
    return run_arena(args, ARENA_CACHE_DIR=str(cache))


def test_report_shows_refused_and_imported_instances_and_exports_them(
    tmp_path: Path, make_repo: MakeRepo, ci_settings: CISettings
) -> None:
    cache = tmp_path / "cache"
    repo, commit = make_repo(PYTHON.files)
    pipeline = PYTHON.pipeline.model_dump(mode="json")
    good = {"instance_id": "ok-1", "repo": repo, "base_commit": commit, "pipeline": pipeline}
    bad_commit = good | {"instance_id": "bad-1", "base_commit": "f" * 40}
    source = tmp_path / "python_filtered_instance_list.jsonl"
    source.write_text("\n".join([json.dumps(good), json.dumps(bad_commit), "{nope"]) + "\n")

    imported = _arena(["tasks", "import", str(source)], cache)
    assert imported.returncode == 2, imported.stderr  # bad lines: reported, counted, kept
    kept = read_refusals(refusals_path(cache))
    assert [(r.key, r.reason, r.language) for r in kept] == [
        ("bad-1", "commit not in repo", "python"),
        ("python_filtered_instance_list.jsonl:3", "not JSON", "python"),
    ]

    shown = _arena(["tasks", "report", "--json"], cache)
    assert shown.returncode == 0, shown.stderr
    body = json.loads(shown.stdout)
    stages = {r["instance_id"]: (r["stage"], r["category"]) for r in body["rows"]}
    assert stages["bad-1"] == ("refused", "commit not in repo")
    assert stages["python_filtered_instance_list.jsonl:3"] == (
        "refused",
        "dataset line inconsistent",
    )
    assert stages["ok-1"][0] in ("imported", "environment built")  # as the engine says
    python = body["by_language"][0]
    assert python["language"] == "python" and python["stages"]["refused"] == 2

    table = _arena(["tasks", "report"], cache)
    assert table.returncode == 0, table.stderr
    for text in ("Instances per language", "Why instances stopped", "commit not in repo"):
        assert text in table.stdout

    out = tmp_path / "report.csv"
    written = _arena(["tasks", "report", "--csv", str(out)], cache)
    assert written.returncode == 0, written.stderr
    with out.open() as f:
        assert {r["instance_id"] for r in csv.DictReader(f)} == set(stages)

    fixed = tmp_path / "python_fixed.jsonl"
    fixed.write_text(json.dumps(bad_commit | {"base_commit": commit}) + "\n")
    assert _arena(["tasks", "import", str(fixed)], cache).returncode == 0
    assert [r.key for r in read_refusals(refusals_path(cache))] == [
        "python_filtered_instance_list.jsonl:3"
    ]
    both = _arena(["tasks", "report", "--json", "--csv", str(out)], cache)
    assert both.returncode == 2 and "not both" in both.stderr
