"""Whether a run's output names any test the gold tests add, when it gave no report.

A validation whose `base + gold patch` run ended well with nothing Arena reads (no report,
no test line) is either a report Arena cannot read (Arena's to fix) or a harness of the
project's own that reports no test by name: asserts in a test program run by `make test`,
whose only result is its exit status. The protocol judges tests one by one (fail to pass,
pass to pass), and an exit status alone would be forged by any `exit(0)`, so such a task
cannot be played; whose doing that is decides its category. The evidence: the names of the
tests the gold tests add or change (functions and test cases defined on their added lines,
or named by git after a changed hunk's `@@`, in any of the languages) appear nowhere in the
steps' output, so no reader could have found their results there. A line with
no gold tests (judged by the repository's own CI), or gold tests that define no test, is
looked for by the tests the repository's test sources define at the base commit instead;
without a name to look for at all, nothing is said.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import cache

from arena.hunks import split_diff
from arena.languages import profiles
from arena.retrieval import is_test_path

MIN_NAME = 4  # shorter names (`run`, `f`) would be found in any output by chance
NOT_TESTS = frozenset({"main", "setUp", "tearDown", "init", "setup", "teardown"})
MARK = "the steps' output names none of the tests"  # what a stored reason is known by
GOLD_TESTS = "the gold tests add or change"
REPOSITORY_TESTS = "the repository's test sources define"
# the sources read for a repository's test names: enough to name its tests, bounded for
# a monorepo
MAX_TEST_SOURCES = 200
MAX_SOURCE_CHARS = 256 * 1024


def gold_test_names(test_patch: str) -> frozenset[str]:
    """The names of the functions and test cases the gold tests define on their added lines,
    and of those whose body they change (the function git names after a hunk's `@@`)."""
    texts: list[str] = []
    for file in split_diff(test_patch):
        for hunk in file.hunks:
            texts += [line[1:] for line in hunk.lines if line.startswith("+")]
            if any(line.startswith(("+", "-")) for line in hunk.lines):
                texts.append(hunk.tail)
    return _defined_names(texts)


def repository_test_names(
    paths: Iterable[str], read: Callable[[str], str | None]
) -> frozenset[str]:
    """The names the repository's test sources define (files whose path says they hold
    tests, in a language Arena reads), the first MAX_TEST_SOURCES of them by path."""
    suffixes = tuple(s for profile in profiles() for s in profile.source_suffixes)
    sources = sorted(p for p in paths if is_test_path(p) and p.lower().endswith(suffixes))
    texts = (read(path) for path in sources[:MAX_TEST_SOURCES])
    return _defined_names(text[:MAX_SOURCE_CHARS] for text in texts if text is not None)


@cache
def _definitions() -> tuple[re.Pattern[str], ...]:
    """A definition on a line, as every registered language writes one: a function (a Go
    one with its receiver) or a framework's test case (GoogleTest, Catch2, doctest)."""
    return tuple(pattern for profile in profiles() for pattern in profile.definitions)


def _defined_names(texts: Iterable[str]) -> frozenset[str]:
    names: set[str] = set()
    for text in texts:
        for pattern in _definitions():
            for found in pattern.finditer(text):
                name = next(g for g in found.groups() if g is not None)
                if len(name) >= MIN_NAME and name not in NOT_TESTS:
                    names.add(name)
    return frozenset(names)


def names_none(names: frozenset[str], outputs: Iterable[str]) -> bool:
    """Whether there were names to look for and no output holds any of them."""
    if not names:
        return False
    return not any(name in output for output in outputs for name in names)
