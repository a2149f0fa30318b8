"""The Go image's `go` adds `-v` to a `go test` that prints no test lines of its own, and
passes everything else through untouched (`ci_runner.languages.golang.GO_SHIM`), run here
with a stand-in for the real `go` that prints what it was given."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ci_runner.languages.golang import GO_SHIM


@pytest.fixture
def shim(tmp_path: Path) -> Path:
    real = tmp_path / "real-go"
    real.write_text('#!/bin/sh\necho "$@"\n')
    real.chmod(0o755)
    path = tmp_path / "go"
    path.write_text(GO_SHIM.replace("/usr/local/bin/go /usr/bin/go", f"/nonexistent {real}"))
    path.chmod(0o755)
    return path


@pytest.mark.parametrize(
    ("args", "given"),
    [
        (["test", "./..."], "test -v ./..."),
        (["test", "-p", "2", "-race", "./..."], "test -v -p 2 -race ./..."),
        (["test", "-json", "./..."], "test -json ./..."),
        (["test", "-v", "./..."], "test -v ./..."),
        (["test", "./...", "-args", "-v"], "test -v ./... -args -v"),
        (["vet", "./..."], "vet ./..."),
        (["env", "GOPATH"], "env GOPATH"),
        ([], ""),
    ],
)
def test_the_shim_makes_go_test_print_its_tests(shim: Path, args: list[str], given: str) -> None:
    done = subprocess.run([shim, *args], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == given
