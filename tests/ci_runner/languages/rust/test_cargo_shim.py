"""The Rust image's `cargo` in an environment's warm-up builds a `cargo test`'s tests without
running them, and otherwise passes its arguments through (`ci_runner.languages.rust.CARGO`),
run here with a stand-in for the real `cargo` that prints what it was given."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ci_runner.env_layout import WARM_UP_VARIABLE
from ci_runner.languages.rust import CARGO


@pytest.fixture
def shim(tmp_path: Path) -> Path:
    real = tmp_path / "real-cargo"
    real.write_text('#!/bin/sh\necho "$@"\n')
    real.chmod(0o755)
    path = tmp_path / "cargo"
    path.write_text(CARGO.replace("/usr/bin/cargo", str(real)).replace("/usr/bin/rustc", "echo"))
    path.chmod(0o755)
    return path


def _given(shim: Path, args: list[str], warm_up: bool) -> str:
    env = {k: v for k, v in os.environ.items() if k != WARM_UP_VARIABLE}
    if warm_up:
        env[WARM_UP_VARIABLE] = "1"
    done = subprocess.run([shim, *args], capture_output=True, text=True, check=True, env=env)
    return done.stdout.strip()


@pytest.mark.parametrize(
    ("args", "in_warm_up"),
    [
        (["test"], "test --no-run"),
        (["test", "--workspace", "--", "--nocapture"], "test --no-run --workspace -- --nocapture"),
        (["+stable", "test", "-p", "core"], "test --no-run -p core"),
        (["--locked", "-q", "test", "--all-features"], "--locked -q test --no-run --all-features"),
        # a flag's value before `test` is not a subcommand Arena can tell: left as it is
        (["--config", "net.offline=true", "test"], "--config net.offline=true test"),
        # doctests cannot be built without running them
        (["test", "--doc"], "test --doc"),
        (["build", "--tests"], "build --tests"),
        (["nextest", "run"], "nextest run"),
        (["run", "--", "test"], "run -- test"),
    ],
)
def test_the_warm_up_builds_the_tests_and_runs_none(
    shim: Path, args: list[str], in_warm_up: str
) -> None:
    assert _given(shim, args, warm_up=True) == in_warm_up
    plain = [a for a in args if not a.startswith("+")]
    assert _given(shim, args, warm_up=False) == " ".join(plain)
