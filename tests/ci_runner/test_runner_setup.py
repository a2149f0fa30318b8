"""The runner-like setup of environment builds: which tools a step calls, Debian's names."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ci_runner.languages.rust import CARGO_SHIM
from ci_runner.runner_setup import (
    RUNNER_TOOLS,
    UBUNTU_TO_DEBIAN,
    apt_map,
    debian_names,
    mentioned_tools,
)


@pytest.mark.parametrize(
    ("script", "tools"),
    [
        ("curl -sSL https://x | sh", ("curl",)),
        ("sudo apt-get update && make -j2 test", ("make",)),
        ("if jq -e .ok r.json; then echo ok; fi", ("jq",)),
        ("VERSION=$(git describe)\nunzip -q a.zip && file a.out", ("unzip", "file")),
        ("sudo -E env CC=gcc make", ("make", "gcc")),  # a compiler named as a value
        ("cmake -B build -D CMAKE_CXX_COMPILER=clang++ -G Ninja", ("cmake", "clang++")),
        ('cmake -DCMAKE_C_COMPILER:FILEPATH="clang" .', ("cmake", "clang")),
        ("CXX=clang++ make", ("make", "clang++")),
        ("cmake -DCMAKE_CXX_COMPILER=clang++-15 .", ("cmake",)),  # a versioned one: no
        ("CGO_ENABLED=0 go test ./...", ()),
        ("echo make sure the file exists; cat file", ()),  # words, not commands
        ("pip install -e . && python -m pytest", ("python", "pip")),
        ("cargo test --features curl", ()),
        # swig's install script: a retrier variable (empty or `travis-retry`) before sudo
        ("$RETRY sudo add-apt-repository -y ppa:x/y", ("add-apt-repository",)),
        ("${RETRY} wget -q https://x", ("wget",)),
    ],
)
def test_a_step_calls_the_runner_tools_in_command_position(
    script: str, tools: tuple[str, ...]
) -> None:
    assert set(mentioned_tools(script)) == set(tools)


def test_a_compiler_the_jobs_env_names_is_a_tool_the_step_needs() -> None:
    assert mentioned_tools("cmake --build b", {"CXX": "clang++", "CC": "clang"}) == (
        "clang",
        "clang++",
        "cmake",
    )


DEBIAN_HAS = {"gcc-multilib", "zsh", "gcc-12", "netcat-openbsd", "libgl1", "python3-dev"}


@pytest.mark.parametrize(
    ("ubuntu", "debian"),
    [
        ("gcc-multilib", ("gcc-multilib",)),  # Debian has it: as asked
        ("zsh", ("zsh",)),
        ("netcat", ("netcat-openbsd",)),
        ("libgl1-mesa-glx", ("libgl1",)),
        ("gcc-9", ("gcc",)),
        ("gcc-12", ("gcc-12",)),
        ("g++-10-multilib", ("g++-multilib",)),
        ("clang-format-14", ("clang-format",)),
        ("libclang-11-dev", ("libclang-dev",)),
        ("openjdk-11-jdk-headless", ("default-jdk-headless",)),
        ("python3.8-dev", ("python3-dev",)),
        ("python3.10", ("python3",)),
        ("mysql-client", ("default-mysql-client",)),
        ("qt5-default", ("qtbase5-dev", "qtbase5-dev-tools")),
        ("libncurses5-dev:i386", ("libncurses-dev:i386",)),
        ("libboost1.74-all-dev", ("libboost-all-dev",)),
        ("gcc-9=9.4.0-1", ("gcc-9=9.4.0-1",)),  # a pinned version is left to apt
        ("no-such-thing", ("no-such-thing",)),  # apt says it cannot locate it
    ],
)
def test_ubuntu_names_map_to_debian_only_where_debian_lacks_them(
    ubuntu: str, debian: tuple[str, ...]
) -> None:
    assert debian_names(ubuntu, DEBIAN_HAS.__contains__).debian == debian


def test_the_shims_table_is_the_mapping_table() -> None:
    lines = apt_map().splitlines()
    assert len(lines) == len(UBUNTU_TO_DEBIAN)
    assert all(line.count("\t") == 1 for line in lines)
    assert set(RUNNER_TOOLS.values()) >= {"curl", "make", "jq", "xz-utils", "pkg-config"}


FAKE_CARGO = """#!/bin/sh
case " $* " in
  *" just@1.53.0 "*--locked*) echo "installed with: $*"; exit 0 ;;
esac
echo "error: cannot install package \\`just 1.59.0\\`, it requires rustc 1.89.0 or newer" >&2
echo "\\`just 1.53.0\\` supports rustc 1.85.0" >&2
exit 101
"""


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ("install just", "installed with: install just@1.53.0 --locked"),
        (
            "+stable install just --root /x",
            "installed with: +stable install just@1.53.0 --root /x --locked",
        ),
        ("build", None),  # not an install: cargo's own failure, as it is
    ],
)
def test_cargo_install_falls_back_to_the_release_the_rustc_supports(
    tmp_path: Path, args: str, expected: str | None
) -> None:
    real = tmp_path / "bin"
    real.mkdir()
    (real / "cargo").write_text(FAKE_CARGO)
    (real / "cargo").chmod(0o755)
    shim = tmp_path / "cargo-shim"
    shim.write_text(CARGO_SHIM)
    done = subprocess.run(
        ["bash", str(shim), *args.split()],
        env={"PATH": f"{real}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )
    if expected is None:
        assert done.returncode == 101 and "supports rustc" in done.stderr
    else:
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == expected


def test_the_cargo_shim_first_on_path_runs_the_cargo_after_it(tmp_path: Path) -> None:
    """The shim finds its own folder on PATH and passes it by, wherever the build puts it."""
    shims, real = tmp_path / "shims", tmp_path / "real"
    shims.mkdir()
    real.mkdir()
    (shims / "cargo").write_text(CARGO_SHIM)
    (real / "cargo").write_text('#!/bin/sh\necho "real cargo $*"\n')
    for path in (shims / "cargo", real / "cargo"):
        path.chmod(0o755)
    done = subprocess.run(
        ["cargo", "test", "--workspace"],
        env={"PATH": f"{shims}:{real}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    )
    assert done.returncode == 0 and done.stdout.strip() == "real cargo test --workspace"
