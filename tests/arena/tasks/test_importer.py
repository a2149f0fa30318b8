"""JSONL import: bad lines are reported by number and field; good lines still import."""

from __future__ import annotations

import json
from pathlib import Path

from arena.tasks.importer import import_jsonl
from arena.tasks.schema import Language
from ci_runner import CISettings
from ci_runner.workflows import JobRef
from ci_runner.workspace import Workspaces
from tests.ci_runner.projects import PYTHON
from tests.conftest import MakeRepo

WORKFLOW = """
jobs:
  unit:
    env: {A: "1"}
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
      - uses: some/deploy-action@v1
      - name: Run tests
        run: python -m pytest -q
        working-directory: .
"""


def _write(path: Path, records: list[object]) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n")
    return path


def test_bad_lines_are_reported_and_good_lines_import(
    tmp_path: Path, make_repo: MakeRepo, ci_settings: CISettings
) -> None:
    repo, commit = make_repo({**PYTHON.files, ".github/workflows/ci.yml": WORKFLOW})
    pipeline = PYTHON.pipeline.model_dump(mode="json")
    good = {
        "instance_id": "ok-1",
        "repo": repo,
        "base_commit": commit,
        "language": "python",
        "pipeline": pipeline,
    }
    swe_bench = {
        "instance_id": "swe-1",
        "repo": repo,
        "base_commit": commit,
        "language": "Python",
        "ci_name_list": ["unit"],
        "FAIL_TO_PASS": '["test_calc::test_add"]',
        "PASS_TO_PASS": "[]",
        "version": 1.2,
        "patch": PYTHON.fix,
    }
    lines = [
        good,
        {k: v for k, v in good.items() if k != "base_commit"} | {"instance_id": "missing"},
        good | {"instance_id": "wrong-type", "language": 42},
        "{not json",
        good | {"instance_id": "bad-commit", "base_commit": "f" * 40},
        swe_bench,
        good,  # a duplicate
        good | {"instance_id": "no-job", "pipeline": None, "ci_name_list": ["deploy"]},
    ]
    workspaces = Workspaces(ci_settings.mirrors_dir, ci_settings.runs_dir)
    report = import_jsonl(_write(tmp_path / "tasks.jsonl", lines), workspaces)

    assert [t.instance_id for t in report.tasks] == ["ok-1", "swe-1"]
    errors = {(e.line, e.field) for e in report.errors}
    assert errors == {
        (2, "base_commit"),
        (3, "language"),
        (4, "(line)"),
        (5, "base_commit"),
        (7, "instance_id"),
        (8, "ci_name_list"),
    }
    assert any("f" * 40 in e.message for e in report.errors if e.line == 5)
    assert any("deploy" in e.message for e in report.errors if e.line == 8)

    derived = report.tasks[1]
    assert derived.language is Language("python") and derived.version == "1.2"
    assert derived.fail_to_pass == ("test_calc::test_add",)
    assert derived.pipeline is not None
    assert [s.run for s in derived.pipeline.steps] == ["python -m pytest -q"]
    assert derived.pipeline.env["A"] == "1" and "PYTEST_ADDOPTS" in derived.pipeline.env
    assert derived.skipped_actions == ("some/deploy-action@v1",)


def test_github_slugs_become_urls_without_checking(tmp_path: Path) -> None:
    record = {
        "instance_id": "gh-1",
        "repo": "octo/widgets",
        "base_commit": "abc1234" + "0" * 33,
        "language": "go",
        "ci_name_list": '["test"]',
    }
    report = import_jsonl(_write(tmp_path / "t.jsonl", [record]), None)
    assert report.errors == []
    assert report.tasks[0].repo == "https://github.com/octo/widgets.git"
    assert report.tasks[0].ci_name_list == (JobRef("test"),)
