"""A test case found in a source file: the lines it spans and which report ids are its own."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

ReadFile = Callable[[str], "str | None"]


@dataclass(frozen=True)
class TestCase:
    """Lines `start`..`end` (1-based, inclusive) define the test(s) whose ids `owns` accepts."""

    __test__ = False  # not a pytest test class, despite the name

    label: str
    start: int
    end: int
    owns: Callable[[str], bool] = field(compare=False, repr=False)

    def spans(self, line: int) -> bool:
        return self.start <= line <= self.end


class CaseFinder(Protocol):
    """One language's parser: the test cases a file at `path` defines."""

    def __call__(self, path: str, source: str, read_file: ReadFile) -> list[TestCase]: ...


def innermost(cases: Iterable[TestCase], line: int) -> TestCase | None:
    """The narrowest case around a line (a Go subtest rather than its parent test)."""
    around = [case for case in cases if case.spans(line)]
    return min(around, key=lambda case: case.end - case.start, default=None)


def is_path_suffix(short: str, long: str) -> bool:
    """Whether `short` names `long` as seen from a subdirectory (`src/lib.rs`, `a/src/lib.rs`)."""
    short = short.strip("/")
    return bool(short) and (long == short or long.endswith("/" + short))
