"""Which paths a pytest line tests."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from ci_runner.languages.scope import Evidence, ReadFile, ScopeRule
from ci_runner.languages.shell import positionals, shell_words, under

PYTEST_LINE = re.compile(
    r"(?:^|[\s;&|(/])(?:py\.?test|python\d*(?:\.\d+)?\s+-m\s+pytest)\s*(?P<args>[^;&|\n]*)"
)
# flags that take the next word as their value
PYTEST_VALUE_FLAGS = frozenset((
    "-k", "-m", "-n", "-p", "-c", "-o", "-W", "-r", "--rootdir", "--cov", "--cov-report",
    "--cov-config", "--junitxml", "--junit-xml", "--maxfail", "--deselect", "--ignore",
    "--ignore-glob", "--durations", "--tb", "--log-level", "--basetemp", "--confcutdir",
    "--dist", "--numprocesses", "--timeout", "--reruns", "--import-mode", "--capture",
    "--override-ini", "--color", "--randomly-seed", "--benchmark-json", "--html",
))  # fmt: skip


def pytest_scope(args: str, directory: str, gold: Sequence[str], read_file: ReadFile) -> Evidence:
    split = shell_words(args)
    tests = [p for p in gold if p.endswith(".py")]
    if split is None or not tests:
        return Evidence.UNKNOWN
    paths, _ = positionals(split[0], PYTEST_VALUE_FLAGS)
    selected = [p.split("::")[0] for p in paths]
    if not selected and split[1]:
        return Evidence.UNKNOWN  # the paths may be in a variable
    if not selected:
        return Evidence.COVERS if any(under(t, directory) for t in tests) else Evidence.MISSES
    for path in selected:
        where = posixpath.normpath(posixpath.join(directory, path))
        if any(under(t, where) for t in tests):
            return Evidence.COVERS
    return Evidence.MISSES


SCOPE = ScopeRule(PYTEST_LINE, pytest_scope)
