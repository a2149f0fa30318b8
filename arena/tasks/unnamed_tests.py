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

from arena.hunks import split_diff
from arena.retrieval import is_test_path

# a definition on an added line: a function (Python, Go with its receiver, Rust, C and C++
# returning a plain type) or a framework's test case (GoogleTest, Catch2, doctest)
_DEFINED = re.compile(
    r"\b(?:def|func|fn)\s+(?:\([^)]*\)\s*)?(?P<function>\w+)"
    r"|\b(?:void|int|bool|auto)\s+(?P<c_function>\w+)\s*\("
    r"|\b(?:TEST|TEST_F|TEST_P|TYPED_TEST)\s*\(\s*\w+\s*,\s*(?P<gtest>\w+)"
    r"|\b(?:TEST_CASE|SCENARIO)\s*\(\s*\"(?P<case>[^\"]+)\""
)
MIN_NAME = 4  # shorter names (`run`, `f`) would be found in any output by chance
NOT_TESTS = frozenset({"main", "setUp", "tearDown", "init", "setup", "teardown"})
MARK = "the steps' output names none of the tests"  # what a stored reason is known by
GOLD_TESTS = "the gold tests add or change"
REPOSITORY_TESTS = "the repository's test sources define"
# the sources read for a repository's test names: enough to name its tests, bounded for
# a monorepo
_SOURCE = re.compile(r"\.(?:py|go|rs|c|cc|cpp|cxx|h|hh|hpp|hxx)$")
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
    sources = sorted(p for p in paths if is_test_path(p) and _SOURCE.search(p))
    texts = (read(path) for path in sources[:MAX_TEST_SOURCES])
    return _defined_names(text[:MAX_SOURCE_CHARS] for text in texts if text is not None)


def _defined_names(texts: Iterable[str]) -> frozenset[str]:
    names: set[str] = set()
    for text in texts:
        for found in _DEFINED.finditer(text):
            name = next(g for g in found.groups() if g is not None)
            if len(name) >= MIN_NAME and name not in NOT_TESTS:
                names.add(name)
    return frozenset(names)


def names_none(names: frozenset[str], outputs: Iterable[str]) -> bool:
    """Whether there were names to look for and no output holds any of them."""
    if not names:
        return False
    return not any(name in output for output in outputs for name in names)
