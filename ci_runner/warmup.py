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

from ci_runner.languages import profiles

# (what went wrong, a pattern of a line of the log that says so)
# (what went wrong, a pattern of a line of the log that says so): of no one language; each
# language's are its LanguageProfile.setup_failures
_ANY_LANGUAGE: tuple[tuple[str, str], ...] = (
    ("a command is missing", r"^\S*sh(?:: line \d+)?: (?:\d+: )?\S+: (?:command )?not found$"),
)


def setup_failures() -> tuple[tuple[str, str], ...]:
    """Every registered language's, then the generic ones."""
    return (*(f for profile in profiles() for f in profile.setup_failures), *_ANY_LANGUAGE)


_COMMAND_NOT_FOUND = 127


def setup_failure(log: str, exit_code: int | None) -> str | None:
    """Why a failed warm-up step could not set itself up (the reason and the log line that
    shows it), or None when it ran its tests, whatever they said."""
    for reason, pattern in setup_failures():
        match = re.search(pattern, log, flags=re.MULTILINE)
        if match:
            line = match.group(0).strip().splitlines()[-1].strip()
            return f"{reason}: {line[:300]}"
    if exit_code == _COMMAND_NOT_FOUND:
        return "a command is missing (exit code 127)"
    return None
