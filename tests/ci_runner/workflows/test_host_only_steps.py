"""Steps a container cannot honour (kernel parameters, the core-dump limit) are skipped with a
note, never run into a failed environment build; real workflow shapes from the corpus."""

from __future__ import annotations

import pytest

from ci_runner.workflows import derive_pipeline
from ci_runner.workflows.commands import is_host_only, without_host_only

# zeux/meshoptimizer's build workflow as its C++ lines have it: an object-valued matrix whose
# properties name and place the legs, and the ASan workaround a container cannot apply
MESHOPTIMIZER = """
name: build
on:
  pull_request:
jobs:
  unix:
    strategy:
      matrix:
        os: [{name: ubuntu, version: ubuntu-latest}, {name: macos-intel, version: macos-13}, {name: macos-arm, version: macos-14}]
    name: ${{matrix.os.name}}
    runs-on: ${{matrix.os.version}}
    steps:
    - uses: actions/checkout@v4
    - name: work around ASLR+ASAN compatibility
      run: sudo sysctl -w vm.mmap_rnd_bits=28
      if: matrix.os.name == 'ubuntu'
    - name: make test
      run: |
        make -j2 config=sanitize test
        make -j2 config=debug test
"""


def test_the_asan_workaround_is_skipped_and_the_leg_keeps_its_tests() -> None:
    derived = derive_pipeline({".github/workflows/build.yml": MESHOPTIMIZER}, ["ubuntu"], "cpp")
    assert derived.leg == "ubuntu"
    steps = [*derived.pipeline.setup, *derived.pipeline.steps]
    assert not any("sysctl" in s.run for s in steps)
    assert [s.name for s in derived.pipeline.steps] == ["make test"]
    assert any(
        "work around ASLR+ASAN compatibility" in note and "host settings only" in note
        for note in derived.notes
    )


@pytest.mark.parametrize(
    "command",
    [
        "sudo sysctl -w vm.mmap_rnd_bits=28",
        "sysctl kernel.randomize_va_space=0",
        "sudo sysctl -p /etc/sysctl.d/99-test.conf",
        "echo 0 | sudo tee /proc/sys/kernel/randomize_va_space",
        "echo core > /proc/sys/kernel/core_pattern",
        "ulimit -c unlimited",
    ],
)
def test_host_settings_are_recognised(command: str) -> None:
    assert is_host_only(command)


@pytest.mark.parametrize(
    "command", ["sysctl vm.mmap_rnd_bits", "ulimit -n 4096", "cat /proc/sys/vm/overcommit_memory"]
)
def test_reading_them_or_other_limits_is_left_alone(command: str) -> None:
    assert not is_host_only(command)


def test_a_step_keeps_its_other_lines() -> None:
    kept, dropped = without_host_only("ulimit -c unlimited\nsudo sysctl -w a.b=1 && true\nctest")
    assert kept == "sudo sysctl -w a.b=1 && true\nctest"  # `true` is not a host setting
    assert dropped == ["ulimit -c unlimited"]
