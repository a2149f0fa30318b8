"""Hostile task files as a user imports or runs them: each bad line is one refused line with its
reason, never a crash, and the good lines still import."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from arena.tasks.refusals import read_refusals, refusals_path
from tests.ci_runner.projects import PYTHON
from tests.command import run_arena
from tests.conftest import MakeRepo

NESTED = "[" * 100_000  # Python's JSON reader recurses once a level


def _arena(args: list[str], cache: Path) -> subprocess.CompletedProcess[str]:
    return run_arena(args, ARENA_CACHE_DIR=str(cache))


def _good(make_repo: MakeRepo, instance_id: str = "ok-1") -> dict[str, object]:
    repo, commit = make_repo(PYTHON.files)
    pipeline = PYTHON.pipeline.model_dump(mode="json")
    return {"instance_id": instance_id, "repo": repo, "base_commit": commit, "pipeline": pipeline}


def test_a_deeply_nested_line_is_one_refused_line_and_the_others_import(
    tmp_path: Path, make_repo: MakeRepo
) -> None:
    cache = tmp_path / "cache"
    good = _good(make_repo)
    source = tmp_path / "python_tasks.jsonl"
    lines = [
        json.dumps(good),
        NESTED,
        '{"instance_id": "huge-number", "n": ' + "7" * 5000 + "}",
        json.dumps(good | {"instance_id": "nested-tests", "FAIL_TO_PASS": NESTED}),
        json.dumps(good | {"instance_id": "ok-2"}),
    ]
    source.write_text("\n".join(lines) + "\n")

    done = _arena(["tasks", "import", str(source)], cache)
    assert done.returncode == 2, done.stderr  # bad lines: reported, counted, kept
    assert "Traceback" not in done.stderr and "RecursionError" not in done.stderr
    assert "imported 2 task(s)" in done.stdout
    assert "line 2: (line): JSON nested more than 64 levels deep" in done.stderr
    assert "line 3: (line): not JSON: Exceeds the limit (4300 digits)" in done.stderr
    assert "line 4: FAIL_TO_PASS:" in done.stderr
    kept = read_refusals(refusals_path(cache))
    assert [(r.key, r.reason) for r in kept] == [
        ("nested-tests", "bad FAIL_TO_PASS"),
        ("python_tasks.jsonl:2", "JSON nested too deep"),
        ("python_tasks.jsonl:3", "not JSON"),
    ]

    shown = _arena(["tasks", "report", "--json"], cache)
    assert shown.returncode == 0, shown.stderr
    rows = {r["instance_id"]: (r["stage"], r["category"]) for r in json.loads(shown.stdout)["rows"]}
    refused = {key: category for key, (stage, category) in rows.items() if stage == "refused"}
    assert refused == dict.fromkeys([r.key for r in kept], "dataset line inconsistent")


def test_a_json_array_with_a_deeply_nested_record_refuses_that_record(
    tmp_path: Path, make_repo: MakeRepo
) -> None:
    cache = tmp_path / "cache"
    good = _good(make_repo)
    deep: object = []
    for _ in range(200):  # deep enough to refuse, shallow enough for Python to read the array
        deep = [deep]
    export = tmp_path / "export.json"
    export.write_text(json.dumps([good, {"instance_id": "deep", "x": deep}]))
    done = _arena(["tasks", "import", "--hf", str(export), "--language", "python"], cache)
    assert done.returncode == 2, done.stderr
    assert "imported 1 task(s)" in done.stdout
    assert "line 2: (line): JSON nested more than 64 levels deep" in done.stderr

    whole = tmp_path / "nested.json"  # starts like an array, reads as none: JSON lines, then
    whole.write_text(NESTED + "\n" + json.dumps(good) + "\n")
    done = _arena(["tasks", "import", "--hf", str(whole), "--language", "python"], cache)
    assert done.returncode == 2, done.stderr
    assert "imported 1 task(s)" in done.stdout
    assert "line 1: (line): JSON nested more than 64 levels deep" in done.stderr


def test_a_deeply_nested_task_file_is_refused_by_ci_run(tmp_path: Path) -> None:
    task = tmp_path / "task.json"
    task.write_text(NESTED)
    done = _arena(["ci", "run", "--task", str(task)], tmp_path / "cache")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "JSON nested more than 64 levels deep" in done.stderr


def test_a_base_commit_that_is_no_full_commit_id_is_refused_naming_the_field(
    tmp_path: Path, make_repo: MakeRepo
) -> None:
    cache = tmp_path / "cache"
    good = _good(make_repo)
    commit = str(good["base_commit"])
    source = tmp_path / "python_tasks.jsonl"
    lines = [
        good | {"instance_id": "branch", "base_commit": "main"},  # the repo has a branch main
        good | {"instance_id": "short", "base_commit": commit[:12]},
        good | {"instance_id": "upper", "base_commit": commit.upper()},
        good,
        good | {"instance_id": "markup", "base_commit": "[/][link=x]"},  # printed as it is
    ]
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    done = _arena(["tasks", "import", str(source)], cache)
    assert done.returncode == 2, done.stderr
    assert "imported 2 task(s)" in done.stdout  # the upper-case id is a full one
    for number, given in ((1, "main"), (2, commit[:12]), (5, "[/][link=x]")):
        assert (
            f"line {number}: base_commit: Value error, base_commit must be a full commit id (40 "
            f"hex digits, or 64 for a SHA-256 repo), not '{given}'"
        ) in done.stderr
    assert {r.key: r.reason for r in read_refusals(refusals_path(cache))} == {
        "branch": "bad base_commit",
        "short": "bad base_commit",
        "markup": "bad base_commit",
    }


FOREIGN = ["evil/miner:latest", "docker.io/library/python:3.12", "arena/ci-cobol:x", "arena/x:y"]


def test_a_task_naming_an_image_arena_did_not_build_is_refused(
    tmp_path: Path, make_repo: MakeRepo
) -> None:
    cache = tmp_path / "cache"
    good = _good(make_repo)
    source = tmp_path / "python_tasks.jsonl"
    lines = [
        good | {"instance_id": f"foreign-{n}", "image": name} for n, name in enumerate(FOREIGN)
    ]
    own = good | {"instance_id": "own", "image": "arena/ci-python:0123456789ab"}
    source.write_text("".join(json.dumps(line) + "\n" for line in [*lines, own]))
    done = _arena(["tasks", "import", str(source)], cache)
    assert done.returncode == 2, done.stderr
    assert "imported 1 task(s)" in done.stdout
    for number, name in enumerate(FOREIGN, start=1):
        assert f"line {number}: image: Value error, image '{name}' is not an image Arena" in (
            done.stderr
        )
    assert "arena/ci-<language>:<tag>, arena/env-<language>:<tag> or arena/base:<suite>" in (
        done.stderr
    )

    task = tmp_path / "task.json"  # refused before any engine is asked to pull or run it
    task.write_text(json.dumps(good | {"image": "evil/miner:latest"}))
    done = _arena(["ci", "run", "--task", str(task)], cache)
    assert done.returncode == 2
    assert "image: Value error, image 'evil/miner:latest' is not an image Arena builds" in (
        done.stderr
    )
