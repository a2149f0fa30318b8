"""The verdict on an environment build's warm-up run: tests ran, or setup itself failed.

The warm-up runs the CI steps once at the base commit. Tests may fail there (the bug is not
fixed yet): that is no fault of the environment. But a run that could not get its
dependencies (pip or tox could not install, cargo could not resolve, a header or a library
of a dependency is missing, CMake could not configure, a tool is not installed, the
toolchain is too old for the lock file) fails fail the same way in every CI run: the
environment is incomplete, and its build must fail with that reason instead of saying ok.
"""

from __future__ import annotations

import re

# (what went wrong, a pattern of a line of the log that says so)
SETUP_FAILURES: tuple[tuple[str, str], ...] = (
    # pip, and pip inside tox, nox and build isolation
    ("pip could not find a version", r"ERROR: Could not find a version that satisfies"),
    ("pip found no distribution", r"ERROR: No matching distribution found for"),
    ("pip could not resolve the requirements", r"ResolutionImpossible"),
    ("a dependency failed to build", r"ERROR: Failed building wheel for"),
    ("a dependency failed to build", r"ERROR: Could not build wheels for"),
    ("a dependency failed to build", r"ERROR: Failed to build installable wheels"),
    ("a dependency failed to build", r"error: subprocess-exited-with-error"),
    ("pip could not install", r"ERROR: Could not install packages due to"),
    ("uv could not resolve", r"No solution found when resolving"),
    ("tox could not install", r"ERROR: could not install deps"),
    ("the Python interpreter is missing", r"could not find python interpreter with spec"),
    ("the Python interpreter is missing", r"nox > .*Python interpreter \S+ not found"),
    ("nox could not install", r"nox > Command .*(?:pip|uv) install .* failed with exit code"),
    ("the tests could not start", r"ImportError while loading conftest"),
    # Go
    ("a Go module is missing", r"missing go\.sum entry"),
    ("a Go module is missing", r"no required module provides package"),
    ("a Go module is missing", r"cannot find module providing package"),
    ("Go could not fetch a module", r"^go: .*(?:dial tcp|GOPROXY=off|module lookup disabled)"),
    ("the Go toolchain is too old", r"requires go >= \S+ \(running go"),
    ("the Go toolchain is too old", r"go\.mod requires go >= "),
    # Rust
    ("cargo could not resolve", r"error: failed to select a version for"),
    ("cargo could not resolve", r"error: no matching package named"),
    ("cargo could not fetch", r"error: failed to download"),
    ("cargo could not fetch", r"error: failed to get `[^`]+` as a dependency"),
    ("cargo could not fetch", r"error: failed to load source for dependency"),
    ("cargo could not fetch", r"attempting to make an HTTP request, but --offline was specified"),
    ("a dependency's build script failed", r"error: failed to run custom build command for"),
    ("the Rust toolchain is too old", r"cannot be built because it requires rustc"),
    ("the Rust toolchain is too old", r"error: failed to parse (?:lock file|manifest)"),
    ("the Rust toolchain is too old", r"feature `[^`]+` is required"),
    # the code uses a language or library feature this rustc has not stabilised (let chains
    # before 1.88): every run fails to compile, whatever the patch
    ("the Rust toolchain is too old", r"^error\[E0658\]: "),
    # C and C++
    ("CMake could not configure", r"Configuring incomplete, errors occurred"),
    ("a dependency's header is missing", r"fatal error: [^:\s]+\.h(?:pp|h)?: No such file"),
    ("a library is missing", r"/ld: cannot find -l\S+"),
    # any language
    ("a command is missing", r"^\S*sh(?:: line \d+)?: (?:\d+: )?\S+: (?:command )?not found$"),
)

_COMMAND_NOT_FOUND = 127


def setup_failure(log: str, exit_code: int | None) -> str | None:
    """Why a failed warm-up step could not set itself up (the reason and the log line that
    shows it), or None when it ran its tests, whatever they said."""
    for reason, pattern in SETUP_FAILURES:
        match = re.search(pattern, log, flags=re.MULTILINE)
        if match:
            line = match.group(0).strip().splitlines()[-1].strip()
            return f"{reason}: {line[:300]}"
    if exit_code == _COMMAND_NOT_FOUND:
        return "a command is missing (exit code 127)"
    return None
