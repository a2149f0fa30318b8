"""Go and Rust repos without external dependencies, shaped like SwingArena's instances: their
lines import unmodified, the workflow's matrix leg is resolved, they validate offline, and the
oracle beats null."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from arena.ci import TaskCI
from arena.match import Arena
from arena.players.baselines import NullPlayer, OraclePlayer
from arena.tasks.demo import DEMO_DIR
from arena.tasks.importer import import_jsonl
from arena.tasks.schema import Language, TaskKind
from ci_runner import CIRunner, CISettings
from ci_runner.images import ImageBuilder
from ci_runner.workspace import Workspaces
from tests.ci_runner.env_builds import remove_built_images
from tests.conftest import MakeRepo

pytestmark = pytest.mark.usefixtures("no_containers_left")


@pytest.fixture(scope="module", autouse=True)
def _remove_environment_images(
    docker_client: docker.DockerClient, ci_settings: CISettings
) -> Iterator[None]:
    """The environment images these tasks built are removed afterwards (the engine is shared)."""
    yield
    remove_built_images(docker_client, ci_settings)


GO_WORKFLOW = """
name: Go
on: [push, pull_request]
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: golangci/golangci-lint-action@v6
  test:
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-latest, macos-latest]
        go: ["1.22"]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-go@v5
        with: {go-version: "${{ matrix.go }}"}
      - run: go mod download
      - run: go vet ./...
      - name: Test
        if: runner.os != 'Windows'
        run: go test -count=1 ./...
"""
RUST_WORKFLOW = """
name: Rust
on: [pull_request]
env:
  CARGO_TERM_COLOR: always
jobs:
  build:
    name: ${{ matrix.toolchain }} on ${{ matrix.os }}
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [windows-latest, ubuntu-latest]
        toolchain: [stable]
    steps:
      - uses: actions/checkout@v4
      - uses: dtolnay/rust-toolchain@stable
      - run: cargo fetch
      - run: cargo build --verbose
      - run: cargo test --verbose
      - if: matrix.os == 'ubuntu-latest' && github.event_name == 'push'
        run: cargo publish --dry-run
"""
CASES = {
    "go": (
        "go-lru-recency",
        GO_WORKFLOW,
        [["test (ubuntu-latest, 1.22)", ".github/workflows/ci.yml"]],
        "test (ubuntu-latest, 1.22) @ .github/workflows/ci.yml",
    ),
    "rust": (
        "rs-duration-units",
        RUST_WORKFLOW,
        [
            [
                "['stable on windows-latest', '.github/workflows/ci.yml']",
                "['stable on ubuntu-latest', '.github/workflows/ci.yml']",
            ]
        ],
        "stable on ubuntu-latest @ .github/workflows/ci.yml",
    ),
}


def _files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("language", sorted(CASES))
def test_a_real_shaped_task_imports_validates_offline_and_oracle_beats_null(
    language: str,
    tmp_path: Path,
    make_repo: MakeRepo,
    runner: CIRunner,
    ci_settings: CISettings,
    images: dict[str, str],
) -> None:
    demo, workflow, jobs, leg = CASES[language]
    source = DEMO_DIR / demo
    repo, commit = make_repo({**_files(source / "repo"), ".github/workflows/ci.yml": workflow})
    line = {  # SwingArena's fields and shape: no language, empty F2P/P2P lists
        "repo": repo,
        "instance_id": f"{demo}-1",
        "base_commit": commit,
        "patch": (source / "gold.patch").read_text(),
        "test_patch": (source / "test.patch").read_text(),
        "problem_statement": "fix it",
        "hints_text": "",
        "created_at": "2024-11-04 13:27:55",
        "merge_commit_sha": "",
        "environment_setup_commit": "",
        "version": "",
        "FAIL_TO_PASS": [],
        "PASS_TO_PASS": [],
        "ci_name_list": jobs,
    }
    path = tmp_path / f"{language}_filtered_instance_list.jsonl"
    path.write_text(json.dumps(line) + "\n")
    workspaces = Workspaces(ci_settings.mirrors_dir, ci_settings.runs_dir)
    report = import_jsonl(path, workspaces)
    assert report.errors == []
    (task,) = report.tasks
    assert task.language is Language(language) and task.kind is TaskKind.GOLD_JUDGED
    assert task.ci_job == leg
    pipeline = task.require_pipeline()
    assert [s.run for s in pipeline.setup] == [
        "go mod download" if language == "go" else "cargo fetch"
    ]
    assert not any("${{" in s.run for s in pipeline.steps)

    ci = TaskCI(runner, ImageBuilder(runner.provider, ci_settings), ci_settings.cache_dir / "ci")
    arena = Arena(ci, workspaces, ci_settings.cache_dir / "retrieval")
    prepared = arena.prepare(task)
    assert prepared.validation.valid and prepared.validation.fail_to_pass
    record = arena.play_match(prepared, OraclePlayer(), NullPlayer())
    rounds = [  # what decided each round, should it ever go another way
        {
            **r.summary(),
            "runs": {k: (v.status, v.error, round(v.duration_s)) for k, v in r.runs.items()},
        }
        for r in record.rounds
    ]
    assert record.result == "oracle" and record.score == {"oracle": 2, "null": 0}, json.dumps(
        rounds, indent=1, default=str
    )
