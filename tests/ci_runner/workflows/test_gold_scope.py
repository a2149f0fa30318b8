"""Legs are ranked by evidence that they run the gold tests: the scope of their test commands
(go test packages, pytest paths, cargo crates, make targets followed into the Makefile)
against the files the gold tests touch; unit legs before integration shards, native before
other architectures, and a leg that runs its tests on another machine is not a leg at all."""

from __future__ import annotations

import pytest

from ci_runner.workflows import Refusal, UnsupportedJob, derive_pipelines
from ci_runner.workflows.commands import ReadFile, RunnerLine
from ci_runner.workflows.scope import Evidence, gold_scope

# traefik's shape: the dataset lists integration shards; the unit tests are another workflow,
# both behind make targets whose recipes say which packages they test
INTEGRATION = """
on: pull_request
jobs:
  test-integration:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        parallel: [3]
        index: [0, 1, 2]
    steps:
      - uses: actions/checkout@v4
      - run: make binary
      - run: TESTFLAGS="-run Shard${{ matrix.index }}" make test-integration
"""
UNIT = """
on: pull_request
jobs:
  test-unit:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Tests
        run: make test-unit
"""
MAKEFILE = (
    "test-unit:\n\tgo test -cover -v $(TESTFLAGS) ./pkg/... ./cmd/...\n\n"
    "test-integration: binary\n\tgo test ./integration -test.timeout=20m -v $(TESTFLAGS)\n"
)


def _read(files: dict[str, str]) -> ReadFile:
    return files.get


def test_the_unit_leg_that_reaches_the_gold_tests_comes_before_integration_shards() -> None:
    workflows = {
        ".github/workflows/test-integration.yaml": INTEGRATION,
        ".github/workflows/test-unit.yaml": UNIT,
    }
    listed = [f"test-integration ({n})" for n in ("3, 0", "3, 1", "3, 2")]
    derived = derive_pipelines(
        workflows,
        listed,
        "go",
        read_file=_read({"Makefile": MAKEFILE}),
        gold_paths=["pkg/server/aggregator_test.go"],
    )
    assert derived.best.leg == "test-unit"  # a fallback, from a workflow the line never named
    chosen = next(r for r in derived.considered if r.leg == "test-unit")
    assert "its tests reach the gold tests (go test" in chosen.why
    shard = next(r for r in derived.considered if r.leg == "test-integration (3, 0)")
    assert "leave the gold tests out" in shard.why and "integration leg" in shard.why


# ko's shape: the listed build job compiles the tests without running one (`-run=^$`), the
# listed end-to-end job needs Docker, and the unit tests are a workflow the line never named
KO = {
    ".github/workflows/build.yaml": """
on: pull_request
jobs:
  build:
    name: Build 1.21
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: |
          go build ./...
          go test -run=^$ ./...
""",
    ".github/workflows/e2e.yaml": """
on: pull_request
jobs:
  e2e:
    name: e2e ubuntu-latest
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: docker run --rm $(go run ./ build ./test/) && go test ./test/...
""",
    ".github/workflows/test.yaml": """
on: pull_request
jobs:
  test:
    name: Unit Tests
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: go test -race ./...
""",
}


def test_a_leg_that_needs_docker_gives_way_to_an_unlisted_one_reaching_the_gold_tests() -> None:
    listed = ["Build 1.21", "e2e ubuntu-latest"]
    derived = derive_pipelines(KO, listed, "go", gold_paths=["pkg/build/gobuild_test.go"])
    assert derived.best.leg == "Unit Tests"
    build = next(r for r in derived.considered if r.leg == "Build 1.21")
    assert "runs commands not recognised as tests" in build.why
    # an unlisted leg that does not reach them is no reason to run the line: Docker stays it
    unit_elsewhere = {**KO, ".github/workflows/test.yaml": KO[".github/workflows/test.yaml"]
                      .replace("./...", "./internal/...")}  # fmt: skip
    with pytest.raises(UnsupportedJob) as raised:
        derive_pipelines(unit_elsewhere, listed, "go", gold_paths=["pkg/build/gobuild_test.go"])
    assert raised.value.reason == Refusal.DOCKER


def _scope(line: str, gold: list[str], files: dict[str, str] | None = None) -> Evidence:
    read = (files or {}).get
    return gold_scope([RunnerLine(line, ".")], gold, read).evidence


@pytest.mark.parametrize(
    ("line", "gold", "evidence"),
    [
        ("go test ./...", ["pkg/a/a_test.go"], Evidence.COVERS),
        ("go test -race -run TestX ./pkg/...", ["pkg/a/a_test.go"], Evidence.COVERS),
        ("go test ./integration", ["pkg/a/a_test.go"], Evidence.MISSES),
        ("go test -v", ["a_test.go"], Evidence.COVERS),  # the folder it runs in
        ("go test $(PKGS)", ["pkg/a/a_test.go"], Evidence.UNKNOWN),
        ("go test github.com/o/r/pkg/...", ["pkg/a/a_test.go"], Evidence.UNKNOWN),
        ("python -m pytest tests/unit -x", ["tests/unit/test_a.py"], Evidence.COVERS),
        ("pytest tests/unit", ["tests/integration/test_a.py"], Evidence.MISSES),
        ("pytest -k 'slow and not db' -n 4", ["tests/test_a.py"], Evidence.COVERS),
        ("pytest tests/test_a.py::test_x", ["tests/test_a.py"], Evidence.COVERS),
        ("tox -e py312", ["tests/test_a.py"], Evidence.UNKNOWN),
        ("go test ./...", ["tests/test_a.py"], Evidence.UNKNOWN),  # no Go gold test
    ],
)
def test_the_scope_of_one_runner_line(line: str, gold: list[str], evidence: Evidence) -> None:
    assert _scope(line, gold) is evidence


WORKSPACE = {
    "Cargo.toml": '[workspace]\nmembers = ["crates/*"]\n',
    "crates/core/Cargo.toml": '[package]\nname = "demo-core"\nversion = "0.1.0"\n',
    "crates/cli/Cargo.toml": '[package]\nname = "demo-cli"\nversion = "0.1.0"\n',
}


@pytest.mark.parametrize(
    ("line", "evidence"),
    [
        ("cargo test -p demo-cli", Evidence.MISSES),
        ("cargo test -p demo-core --all-features", Evidence.COVERS),
        ("cargo +stable test --package=demo-core", Evidence.COVERS),
        ("cargo test --workspace", Evidence.COVERS),
        ("cargo test", Evidence.COVERS),  # a virtual workspace's root tests every member
        ("cargo nextest run -p demo-cli", Evidence.MISSES),
        ("cargo +stable -Z build-std test -p demo-cli", Evidence.MISSES),
        ("cargo test --manifest-path crates/cli/Cargo.toml", Evidence.MISSES),
    ],
)
def test_the_crates_cargo_selects(line: str, evidence: Evidence) -> None:
    assert _scope(line, ["crates/core/tests/parse.rs"], WORKSPACE) is evidence


CROSS = """
on: pull_request
jobs:
  test:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        arch: [s390x, arm, amd64]
    name: test (${{ matrix.arch }})
    steps:
      - run: go test ./...
  remote:
    name: test (ppc64le on a remote box)
    runs-on: ubuntu-latest
    steps:
      - run: ssh ci@ppc.example.org "cd src && go test ./..."
"""


def test_native_legs_first_and_remote_legs_dropped() -> None:
    derived = derive_pipelines(
        {".github/workflows/ci.yml": CROSS},
        ["test (s390x)", "test (arm)", "test (ppc64le on a remote box)", "test (amd64)"],
        "go",
        gold_paths=["a_test.go"],
    )
    assert [c.leg for c in derived.candidates] == ["test (amd64)", "test (s390x)", "test (arm)"]
    remote = next(r for r in derived.considered if r.leg.startswith("test (ppc64le"))
    assert not remote.kept and "runs its tests on another machine (ssh" in remote.why
