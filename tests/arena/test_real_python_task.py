"""A Python repo shaped like SwingArena's instances, end to end through the CLI: its line
imports unmodified, the workflow's matrix leg is resolved (`if:` conditions, `sudo apt-get`,
a `pip install` from PyPI, tox), its environment is built with network, it validates
offline, and the oracle beats null; its tox pytest stops at the first failure, and the
rounds are guarded all the same."""

from __future__ import annotations

import json
from pathlib import Path

import docker
import pytest

from tests.ci_runner.env_builds import build_settings, remove_built_images, run_arena_building
from tests.conftest import MakeRepo

W = ".github/workflows/ci.yml"

WORKFLOW = """
name: CI
on: [push, pull_request]
env:
  PIP_PROGRESS_BAR: "off"
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: pip install ruff && ruff check .
  tests:
    name: ${{ matrix.os }} (${{ matrix.python-version }})
    runs-on: ${{ matrix.os }}
    if: github.event_name != 'schedule'
    strategy:
      fail-fast: false
      matrix:
        os: [ubuntu-latest, windows-latest]
        python-version: ["3.11", "3.12"]
        exclude:
          - os: windows-latest
            python-version: "3.11"
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python-version }}
      - name: System packages
        if: runner.os == 'Linux'
        run: |
          sudo apt-get update -q
          sudo apt-get install -y -q --no-install-recommends libyaml-dev
      - name: Windows only
        if: runner.os == 'Windows'
        run: choco install something
      - name: Install
        run: |
          python -m pip install --upgrade pip
          python -m pip install tox six
      - name: Tests
        if: ${{ !cancelled() }}
        run: tox -e py${{ matrix.python-version }}
      - name: Coverage
        if: matrix.python-version == '3.12' && github.ref == 'refs/heads/main'
        run: echo upload
"""
FILES = {
    ".github/workflows/ci.yml": WORKFLOW,
    "pyproject.toml": (
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "calc"\nversion = "0.1"\ndependencies = ["six"]\n\n'
        '[tool.setuptools]\npy-modules = ["calc"]\n'
    ),
    # tox installs pytest into its own virtualenv: offline, it comes from the wheelhouse;
    # its pytest stops at the first failure, so the tripwires run apart (`tox exec`)
    "tox.ini": (
        "[tox]\nenv_list = py3.11\n\n[testenv]\ndeps = pytest\ncommands = pytest -x -q {posargs}\n"
    ),
    "calc.py": (
        "import six\n\n\ndef add(a, b):\n    return a - b\n\n\n"
        "def label(x):\n    return six.text_type(x)\n"
    ),
    "test_calc.py": ("from calc import label\n\n\ndef test_label():\n    assert label(3) == '3'\n"),
}
PATCH = (
    "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n"
    "@@ -3,5 +3,5 @@ import six\n \n \n def add(a, b):\n-    return a - b\n+    return a + b\n \n \n"
)
TEST_PATCH = (
    "diff --git a/test_calc.py b/test_calc.py\n--- a/test_calc.py\n+++ b/test_calc.py\n"
    "@@ -1,5 +1,9 @@\n-from calc import label\n+from calc import add, label\n \n \n"
    " def test_label():\n     assert label(3) == '3'\n+\n+\n+def test_add():\n"
    "+    assert add(2, 3) == 5\n"
)


@pytest.mark.usefixtures("no_containers_left")
def test_a_python_task_with_tox_imports_builds_validates_offline_and_plays(
    tmp_path: Path,
    make_repo: MakeRepo,
    docker_client: docker.DockerClient,
    no_containers_left: None,
) -> None:
    repo, commit = make_repo(FILES)
    line = {  # SwingArena's fields and shape: no language, empty F2P/P2P lists
        "repo": repo,
        "instance_id": "calc__calc-7",
        "base_commit": commit,
        "patch": PATCH,
        "test_patch": TEST_PATCH,
        "problem_statement": "add() subtracts",
        "hints_text": "",
        "created_at": "2024-11-04 13:27:55",
        "merge_commit_sha": "",
        "environment_setup_commit": "",
        "version": "",
        "FAIL_TO_PASS": [],
        "PASS_TO_PASS": [],
        "ci_name_list": [
            ["lint", W],
            "['windows-latest (3.12)', '.github/workflows/ci.yml']",
            "['ubuntu-latest (3.11)', '.github/workflows/ci.yml']",
        ],
    }
    source = tmp_path / "python_filtered_instance_list.jsonl"
    source.write_text(json.dumps(line) + "\n")
    settings = build_settings(tmp_path / "cache")
    try:
        imported = run_arena_building(["tasks", "import", str(source)], settings)
        assert imported.returncode == 0, imported.stdout + imported.stderr
        assert "imported 1 task(s) (1 gold-judged)" in imported.stdout, imported.stdout

        library = json.loads((settings.cache_dir / "tasks.jsonl").read_text())
        assert library["language"] == "python"
        assert library["ci_job"] == f"ubuntu-latest (3.11) @ {W}"
        setup = [(s["name"], s["run"]) for s in library["pipeline"]["setup"]]
        assert setup == [
            (
                "System packages",
                "apt-get update -q\napt-get install -y -q --no-install-recommends libyaml-dev",
            ),
            ("Install", "python -m pip install --upgrade pip\npython -m pip install tox six"),
        ], setup
        assert [s["run"] for s in library["pipeline"]["steps"]] == ["tox -e py3.11"]
        notes = "\n".join(library["workflow_notes"])
        assert "step 'Windows only' skipped: its if: (runner.os == 'Windows') is false" in notes
        assert "leg 'windows-latest (3.12)'" in notes and "runs on windows-latest" in notes

        built = run_arena_building(["tasks", "build-env", "--tasks", "imported"], settings)
        assert built.returncode == 0, built.stdout + built.stderr
        assert "arena/env-python:" in built.stdout, built.stdout

        validated = run_arena_building(
            ["tasks", "validate", "--tasks", "imported", "--json"], settings
        )
        assert validated.returncode == 0, validated.stdout + validated.stderr
        (verdict,) = json.loads(validated.stdout)
        assert verdict["valid"], verdict
        assert verdict["fail_to_pass"] == ["test_calc::test_add"], verdict
        assert verdict["pass_to_pass"] == ["test_calc::test_label"], verdict

        played = run_arena_building(
            [
                "play",
                "--task",
                "calc__calc-7",
                "--a",
                "oracle",
                "--b",
                "null",
                "--tasks",
                "imported",
                "--json",
            ],
            settings,
        )
        assert played.returncode == 0, played.stdout + played.stderr
        match = json.loads(played.stdout)
        assert match["result"] == "oracle" and match["score"] == {"oracle": 2, "null": 0}, match
        assert match["unguarded"] is False, match  # the must-fail tripwire ran in tox's env
        first, second = match["rounds"]
        assert (first["patch_correct"], first["tests_valid"], first["tests_catch"]) == (
            True,
            False,
            False,
        ), first
        assert (second["patch_correct"], second["tests_valid"]) == (False, True), second
    finally:
        remove_built_images(docker_client, settings)
