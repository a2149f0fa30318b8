"""The runner-like setup of environment builds: which tools a step calls, Debian's names."""

from __future__ import annotations

import pytest

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
        ("sudo -E env CC=gcc make", ("make",)),
        ("CGO_ENABLED=0 go test ./...", ()),
        ("echo make sure the file exists; cat file", ()),  # words, not commands
        ("pip install -e . && python -m pytest", ("python", "pip")),
        ("cargo test --features curl", ()),
    ],
)
def test_a_step_calls_the_runner_tools_in_command_position(
    script: str, tools: tuple[str, ...]
) -> None:
    assert set(mentioned_tools(script)) == set(tools)


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
