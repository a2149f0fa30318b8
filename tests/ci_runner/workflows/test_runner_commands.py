"""Test commands as real workflows write them are recognised as test steps, and their tests are
read: cargo's own options before the subcommand, nextest, gotestsum, hatch, nox, tox."""

from __future__ import annotations

import pytest

from ci_runner.workflows import derive_pipeline
from ci_runner.workflows.commands import test_runner as runner_of


@pytest.mark.parametrize(
    "command",
    [
        "cargo +stable -Z build-std test --target x86_64-unknown-linux-gnu",
        "cargo --locked test --workspace",
        "cargo nextest run --workspace",
        "gotestsum --format testname -- -race ./...",
        "hatch run test:pytest",
        "hatch run test",
        "nox -s tests-3.12",
        "tox -e py312",
        "make test",
    ],
)
def test_the_command_is_a_test_step(command: str) -> None:
    assert runner_of(command, ".", lambda _: None) is not None


@pytest.mark.parametrize(
    "command",
    [
        "go build ./...\ngo test -run=^$ ./...",  # ko's build job: compiles the tests only
        "go test -run '^$' -bench=. ./...",
        'go test -run="^$" ./...',
        "go test -list . ./...",
        "cargo test --no-run --workspace",
        "pytest --collect-only -q",
        "python -m pytest --co tests/",
        "ctest -N --test-dir build",
    ],
)
def test_a_runner_line_that_selects_no_test_is_no_test_step(command: str) -> None:
    assert runner_of(command, ".", lambda _: None) is None


@pytest.mark.parametrize(
    "command",
    ["go test -run ^TestParse$ ./...", "go test -run='^(TestA|TestB)$' ./pkg/...", "ctest -j4"],
)
def test_a_runner_line_that_selects_some_tests_is_a_test_step(command: str) -> None:
    assert runner_of(command, ".", lambda _: None) is not None


def test_gotestsum_prints_its_tests_as_go_test_v_does() -> None:
    workflow = """
on: pull_request
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: go install gotest.tools/gotestsum@v1.12.0
      - run: gotestsum -- ./...
"""
    derived = derive_pipeline({".github/workflows/ci.yml": workflow}, ["test"], "go")
    assert derived.pipeline.env["GOTESTSUM_FORMAT"] == "standard-verbose"
    assert derived.pipeline.env["GOFLAGS"].endswith("-v")
