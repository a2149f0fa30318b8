"""Whether a run's output names any test the gold tests add, when it gave no report.

A validation whose `base + gold patch` run ended well with nothing Arena reads (no report,
no test line) is either a report Arena cannot read (Arena's to fix) or a harness of the
project's own that reports no test by name: asserts in a test program run by `make test`,
whose only result is its exit status. The protocol judges tests one by one (fail to pass,
pass to pass), and an exit status alone would be forged by any `exit(0)`, so such a task
cannot be played; whose doing that is decides its category. The evidence: the names of the
tests the gold tests add or change (functions and test cases defined on their added lines,
or named by git after a changed hunk's `@@`, in any of the languages) appear nowhere in the
steps' output, so no reader could have found their results there. Without a name to look
for (a line with no gold tests), nothing is said.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from arena.players.hunks import split_diff

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
MARK = "the steps' output names none of the tests the gold tests add or change"


def gold_test_names(test_patch: str) -> frozenset[str]:
    """The names of the functions and test cases the gold tests define on their added lines,
    and of those whose body they change (the function git names after a hunk's `@@`)."""
    texts: list[str] = []
    for file in split_diff(test_patch):
        for hunk in file.hunks:
            texts += [line[1:] for line in hunk.lines if line.startswith("+")]
            if any(line.startswith(("+", "-")) for line in hunk.lines):
                texts.append(hunk.tail)
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
