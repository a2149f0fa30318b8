"""`arena ci run` as a user runs it: JSON, tables and exit codes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ci_runner import CISettings
from tests.ci_runner.projects import PYTHON
from tests.command import run_arena
from tests.conftest import MakeRepo


def _arena(args: list[str], settings: CISettings, **env: str) -> subprocess.CompletedProcess[str]:
    return run_arena(args, ARENA_CACHE_DIR=str(settings.cache_dir), **env)


@pytest.fixture
def task_file(tmp_path: Path, make_repo: MakeRepo) -> Path:
    repo, commit = make_repo(PYTHON.files)
    path = tmp_path / "task.json"
    path.write_text(
        json.dumps(
            {
                "instance_id": "calc-1",
                "repo": repo,
                "base_commit": commit,
                "language": "python",
                "pipeline": PYTHON.pipeline.model_dump(mode="json"),
            }
        )
    )
    return path


def _diff_file(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_json_result_of_a_correct_diff(
    task_file: Path, tmp_path: Path, ci_settings: CISettings, images: dict[str, str]
) -> None:
    done = _arena(
        [
            "ci",
            "run",
            "--task",
            str(task_file),
            "--diff",
            _diff_file(tmp_path, "fix.diff", PYTHON.fix),
            "--json",
        ],
        ci_settings,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert {"status", "tests", "steps", "error"} <= set(result)
    assert result["status"] == "passed"
    assert result["tests"] == {PYTHON.test_add: "passed", PYTHON.test_other: "passed"}
    step = result["steps"][0]
    # pytest's exit is 1 for the runner's own tripwire that must fail, and only for it
    assert step["name"] == "test" and step["exit_code"] == 1 and step["tripwire_exit"]
    assert [s["site"] for s in result["tripwires"]] == ["python ."]


def test_failing_tests_still_exit_zero_and_show_a_table(
    task_file: Path, tmp_path: Path, ci_settings: CISettings, images: dict[str, str]
) -> None:
    done = _arena(
        [
            "ci",
            "run",
            "--task",
            str(task_file),
            "--diff",
            _diff_file(tmp_path, "bad.diff", PYTHON.wrong_fix),
        ],
        ci_settings,
    )
    assert done.returncode == 0, done.stderr
    assert "status: failed" in done.stdout
    assert PYTHON.test_add in done.stdout and "failed" in done.stdout


def test_stale_diff_exits_2_naming_the_file(
    task_file: Path, tmp_path: Path, ci_settings: CISettings, images: dict[str, str]
) -> None:
    done = _arena(
        [
            "ci",
            "run",
            "--task",
            str(task_file),
            "--diff",
            _diff_file(tmp_path, "old.diff", PYTHON.stale),
            "--json",
        ],
        ci_settings,
    )
    assert done.returncode == 2
    result = json.loads(done.stdout)
    assert result["status"] == "error" and "calc.py" in result["error"]


def test_plain_diff_as_a_model_writes_it_runs_and_reports_the_fuzz(
    task_file: Path, tmp_path: Path, ci_settings: CISettings, images: dict[str, str]
) -> None:
    plain = (
        "The fix:\n\n```diff\n--- calc.py\n+++ calc.py\n@@ -10,7 +10,7 @@\n def add(a, b):\n"
        "-    return a - b\n+    return a + b\n```\n"
    )
    args = ["ci", "run", "--task", str(task_file), "--diff", _diff_file(tmp_path, "p.diff", plain)]
    done = _arena([*args, "--json"], ci_settings)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "passed"
    assert result["fuzz"] == [
        "diff #1: calc.py: hunk #1 line counts recounted (@@ -10,7 +10,7 @@ holds -2 +2 lines)",
        "diff #1: calc.py: hunk #1 applied at line 1 with fuzz 1 and offset -9 lines",
    ]
    shown = _arena(args, ci_settings)
    assert shown.returncode == 0 and "status: passed" in shown.stdout
    assert "applied inexactly: diff #1: calc.py: hunk #1 applied at line 1" in shown.stderr


MARKUP_PATHS = [
    "[bold red]x[/]/../y.py",
    "x[/]/../y.py",
    "[link=mailto:x@evil.example]calc.py[/link]",
]


@pytest.mark.parametrize("path", MARKUP_PATHS)
def test_a_refused_path_holding_markup_is_printed_as_it_is(
    path: str, task_file: Path, tmp_path: Path, ci_settings: CISettings, images: dict[str, str]
) -> None:
    diff = f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-nothing\n+evil\n"
    args = ["ci", "run", "--task", str(task_file), "--diff", _diff_file(tmp_path, "m.diff", diff)]
    done = _arena(args, ci_settings)  # table mode: rich renders what it prints
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "MarkupError" not in done.stderr
    assert f"error: diff #1: {path}: " in done.stderr
    assert "status: error" in done.stdout


def test_markup_in_step_names_is_shown_as_it_is(
    tmp_path: Path, make_repo: MakeRepo, ci_settings: CISettings, images: dict[str, str]
) -> None:
    repo, commit = make_repo(PYTHON.files)
    pipeline = PYTHON.pipeline.model_dump(mode="json")
    named = "[/][bold red]pwned[/bold red]"
    pipeline["steps"] = [{"name": "[link=https://evil.example]first[/link]", "run": "true"},
                         *({**s, "name": named} for s in pipeline["steps"])]  # fmt: skip
    task = tmp_path / "task.json"
    task.write_text(
        json.dumps(
            {
                "instance_id": "[/]",
                "repo": repo,
                "base_commit": commit,
                "language": "python",
                "pipeline": pipeline,
            }
        )
    )
    done = _arena(["ci", "run", "--task", str(task)], ci_settings)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "pwned" in done.stdout and "[bold red]pwned[/bold red]" in done.stdout


def test_oversized_diff_file_exits_2_before_it_is_read(
    task_file: Path, tmp_path: Path, ci_settings: CISettings
) -> None:
    huge = tmp_path / "huge.diff"
    with huge.open("wb") as handle:
        handle.truncate(200 * 1024 * 1024)  # sparse: costs no disk
    done = _arena(["ci", "run", "--task", str(task_file), "--diff", str(huge)], ci_settings)
    assert done.returncode == 2
    assert "huge.diff is 200.0 MiB, over the 16 MiB limit" in done.stderr


def test_task_missing_a_field_exits_2_naming_it(tmp_path: Path, ci_settings: CISettings) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"instance_id": "x", "repo": "/nowhere", "language": "python"}))
    done = _arena(["ci", "run", "--task", str(bad)], ci_settings)
    assert done.returncode == 2
    assert "base_commit: Field required" in done.stderr
    bad.write_text(
        json.dumps(
            {
                "instance_id": "x",
                "repo": "/nowhere",
                "base_commit": "abc1234" + "0" * 33,
                "language": "go",
            }
        )
    )
    done = _arena(["ci", "run", "--task", str(bad)], ci_settings)
    assert done.returncode == 2
    assert "pipeline is required unless ci_name_list names a workflow job" in done.stderr


def test_unknown_language_and_missing_files_exit_2(
    task_file: Path, tmp_path: Path, ci_settings: CISettings
) -> None:
    task = json.loads(task_file.read_text())
    task["language"] = "cobol"
    bad = tmp_path / "cobol.json"
    bad.write_text(json.dumps(task))
    done = _arena(["ci", "run", "--task", str(bad)], ci_settings)
    assert done.returncode == 2 and "language" in done.stderr
    done = _arena(["ci", "run", "--task", str(tmp_path / "absent.json")], ci_settings)
    assert done.returncode == 2 and "absent.json does not exist" in done.stderr
    done = _arena(
        ["ci", "run", "--task", str(task_file), "--diff", str(tmp_path / "no.diff")], ci_settings
    )
    assert done.returncode == 2 and "no.diff does not exist" in done.stderr


@pytest.mark.docker  # its CLI run asks the engine
def test_unknown_commit_exits_2(task_file: Path, tmp_path: Path, ci_settings: CISettings) -> None:
    task = json.loads(task_file.read_text())
    task["base_commit"] = "0" * 40
    bad = tmp_path / "commit.json"
    bad.write_text(json.dumps(task))
    done = _arena(["ci", "run", "--task", str(bad)], ci_settings)
    assert done.returncode == 2 and "0" * 40 in done.stderr


def test_no_docker_engine_exits_3(task_file: Path, tmp_path: Path, ci_settings: CISettings) -> None:
    done = _arena(
        ["ci", "run", "--task", str(task_file)],
        ci_settings,
        DOCKER_HOST=f"unix://{tmp_path}/no-such-docker.sock",
    )
    assert done.returncode == 3
    assert "Docker engine" in done.stderr
