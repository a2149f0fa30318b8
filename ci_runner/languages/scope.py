"""How a language reads the scope of one of its runner lines: which files a `go test`,
`pytest` or `cargo test` line reaches, set against the files the gold tests touch
(`ci_runner.workflows.scope` asks every language's rules)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import IntEnum

ReadFile = Callable[[str], "str | None"]


class Evidence(IntEnum):
    """Smaller is better: the order legs are ranked in."""

    COVERS = 0  # a runner line's scope holds a gold test
    UNKNOWN = 1  # no runner line's scope could be read, or no gold test is of its language
    MISSES = 2  # every runner line's scope leaves every gold test out


# (the line's arguments, its folder, the gold tests' paths, a reader of the base's files)
ScopeReader = Callable[[str, str, Sequence[str], ReadFile], Evidence]


@dataclass(frozen=True)
class ScopeRule:
    """A runner line of the language (`line`, its arguments in group `args`) and how its
    scope is read."""

    line: re.Pattern[str]
    read: ScopeReader
