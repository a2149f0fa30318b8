"""Conda jobs are unsupported: such a task is refused with its reason (the import report's
count, the validation's reason), never imported into a silently wrong environment."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path

import pytest

from arena.tasks.importer import import_lines
from arena.tasks.schema import Language
from arena.tasks.trials import Fault, fault_of
from ci_runner import CISettings
from ci_runner.workflows.refusals import Refusal
from ci_runner.workspace import Workspaces
from tests.ci_runner.projects import PYTHON
from tests.command import run_arena
from tests.conftest import MakeRepo

W = ".github/workflows/tests.yml"

CONDA_WORKFLOW = """
name: Tests
on: [pull_request]
jobs:
  test:
    runs-on: ${{ matrix.os }}
    defaults:
      run:
        shell: bash -l {0}
    strategy:
      matrix:
        os: [ubuntu-latest]
        python-version: ["3.12"]
        environment: [ci/environment.yml]
    steps:
      - uses: actions/checkout@v4
      - uses: conda-incubator/setup-miniconda@v3
        with:
          environment-file: ${{ matrix.environment }}
          python-version: ${{ matrix.python-version }}
      - name: Install
        run: python -m pip install --no-deps -e .
      - name: Run tests
        run: pytest -v
"""


def _line(repo: str, commit: str, instance_id: str) -> str:
    return json.dumps(
        {
            "instance_id": instance_id,
            "repo": repo,
            "base_commit": commit,
            "patch": PYTHON.fix,
            "test_patch": "",
            "FAIL_TO_PASS": [],
            "PASS_TO_PASS": [],
            "ci_name_list": [["test (ubuntu-latest, 3.12, ci/environment.yml)", W]],
        }
    )


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("reachable", [True, False])
def test_a_conda_job_is_skipped_with_its_reason_in_the_import_report(
    reachable: bool,
    conda_channel: str,
    make_repo: MakeRepo,
    ci_settings: CISettings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where a conda channel answers, conda is outside Arena's scope; where none does, the
    machine is what stops it (no tool could build the environment here)."""
    channel = conda_channel if reachable else f"http://127.0.0.1:{_closed_port()}/conda-forge"
    monkeypatch.setenv("ARENA_CONDA_CHANNEL", channel)
    repo, commit = make_repo({**PYTHON.files, W: CONDA_WORKFLOW})
    workspaces = Workspaces(ci_settings.mirrors_dir, ci_settings.runs_dir)
    report = import_lines([_line(repo, commit, "conda-1")], workspaces, language=Language("python"))
    assert report.tasks == []
    reason = Refusal.CONDA if reachable else Refusal.CONDA_UNREACHABLE
    assert report.skipped() == {reason.value: 1}
    (error,) = report.errors
    assert error.field == "ci_name_list"
    assert "uses conda-incubator/setup-miniconda@v3" in error.message
    assert "which Arena does not support" in error.message
    assert ("no conda channel answers" in error.message) is not reachable
    assert fault_of(reason.value) is (Fault.SCOPE if reachable else Fault.MACHINE)


@pytest.mark.docker  # its CLI run asks the engine
def test_a_conda_task_imported_unchecked_is_invalid_with_its_reason(
    tmp_path: Path, make_repo: MakeRepo
) -> None:
    repo, commit = make_repo({**PYTHON.files, W: CONDA_WORKFLOW})
    source = tmp_path / "python_filtered_instance_list.jsonl"
    source.write_text(_line(repo, commit, "conda-2") + "\n")

    def arena(*args: str) -> subprocess.CompletedProcess[str]:
        return run_arena(args, ARENA_CACHE_DIR=str(tmp_path / "cache"), COLUMNS="250")

    imported = arena("tasks", "import", "--no-check", str(source))
    assert imported.returncode == 0 and "imported 1 task(s)" in imported.stdout, imported.stderr

    listed = arena("tasks", "list", "--tasks", "imported")
    assert listed.returncode == 0, listed.stderr
    assert "no pipeline" in listed.stdout and "needs conda" in listed.stdout, listed.stdout

    validated = arena("tasks", "validate", "--tasks", "imported", "--json")
    assert validated.returncode == 0, validated.stdout + validated.stderr
    (verdict,) = json.loads(validated.stdout)
    assert verdict["valid"] is False and "needs conda" in verdict["reason"], verdict
    stored = json.loads((tmp_path / "cache" / "tasks.jsonl").read_text())
    assert stored["validation"]["reason"] == verdict["reason"]  # kept with the task

    played = arena(
        "play", "--task", "conda-2", "--a", "oracle", "--b", "null", "--tasks", "imported"
    )
    assert played.returncode != 0 and "needs conda" in played.stdout + played.stderr
