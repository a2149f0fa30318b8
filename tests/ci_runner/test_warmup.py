"""The warm-up verdict: tests that ran and failed are fine, a run that could not set up is not."""

from __future__ import annotations

import pytest

from ci_runner.warmup import setup_failure

SETUP_FAILED = [
    (
        "Collecting tree-sitter==0.20.1\n  error: subprocess-exited-with-error\n"
        "ERROR: Failed building wheel for tree-sitter\n",
        "a dependency failed to build",
    ),
    (
        "ERROR: Could not find a version that satisfies the requirement foo==9 (from versions: 1)\n"
        "ERROR: No matching distribution found for foo==9\n",
        "pip could not find a version",
    ),
    ("py38: skipped because could not find python interpreter with spec(s): py38\n", "interpreter"),
    ("ERROR: could not install deps [pytest]; v = InvocationError(...)\n", "tox could not install"),
    ("nox > Command python -m pip install .[test] failed with exit code 1\n", "nox could not"),
    ("ImportError while loading conftest '/w/tests/conftest.py'.\n", "tests could not start"),
    ("main.go:4:2: no required module provides package github.com/x/y; to add it:\n", "Go module"),
    ("go: go.mod requires go >= 1.21 (running go 1.19; GOTOOLCHAIN=local)\n", "too old"),
    ('error: failed to select a version for the requirement `serde = "^9"`\n', "cargo could"),
    ("error: package `clap v4.5.0` cannot be built because it requires rustc 1.74\n", "too old"),
    # crussella0129/CubiKan's let chains (stable in Rust 1.88) under trixie's 1.85
    (
        "error[E0658]: `let` expressions in this position are unstable\n"
        "   --> crates/cubikan-backend/src/relationship_store.rs:381:8\n",
        "the Rust toolchain is too old",
    ),
    ("error: failed to run custom build command for `openssl-sys v0.9.1`\n", "build script"),
    ("-- Configuring incomplete, errors occurred!\n", "CMake could not configure"),
    ("src/a.c:1:10: fatal error: zlib.h: No such file or directory\n", "header is missing"),
    ("/usr/bin/ld: cannot find -lssl: No such file or directory\n", "library is missing"),
    ("bash: line 1: tox: command not found\n", "a command is missing"),
]


@pytest.mark.parametrize(("log", "reason"), SETUP_FAILED)
def test_a_run_that_could_not_set_up_is_a_setup_failure(log: str, reason: str) -> None:
    found = setup_failure("running\n" + log + "done\n", 1)
    assert found is not None and reason in found, found


@pytest.mark.parametrize(
    "log",
    [
        "FAILED tests/test_x.py::test_y - AssertionError: not found\n1 failed, 3 passed\n",
        "--- FAIL: TestSquare (0.00s)\n    area_test.go:7: Square\nFAIL\n",
        "test tests::sums ... FAILED\ntest result: FAILED. 1 passed; 1 failed\n",
        "The following tests FAILED:\n\t  1 - crc_of_hello (Failed)\n",
        "key: not found\n",  # a test's own message, not the shell's
    ],
)
def test_tests_that_ran_and_failed_are_no_setup_failure(log: str) -> None:
    assert setup_failure(log, 1) is None


def test_a_missing_command_shows_in_the_exit_code() -> None:
    assert setup_failure("", 127) == "a command is missing (exit code 127)"
