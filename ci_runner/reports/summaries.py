"""The summary line a test runner prints itself, to check a report file against.

Code under test can rewrite a report file (an `atexit` hook, a daemon) but the runner's own
summary line reached our log before that. pytest, `go test`, `cargo test` and ctest each
print one; a report claiming fewer failures or more passes than it is forged.
Parsed with string operations and bounded counts on bounded lines: linear in the log.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ci_runner.reports.lines import MAX_LINE
from ci_runner.types import TestOutcome

_COUNT = re.compile(r"\d{1,9}")
_PYTEST_TIME = re.compile(r"\d{1,9}(\.\d{1,9})?s( \([\d:.]{1,20}\))?")
_PYTEST_WORDS = {
    "failed": "failed",
    "error": "failed",
    "errors": "failed",
    "passed": "passed",
    "skipped": None,
    "xfailed": None,
    "xpassed": "passed",
    "deselected": None,
    "warning": None,
    "warnings": None,
    "rerun": None,
}
_CTEST = re.compile(r"\d{1,3}% tests passed, (\d{1,9}) tests? failed out of (\d{1,9})")


@dataclass(frozen=True)
class RunnerSummary:
    """What the runners' own summary lines add up to; `passed` is None where one cannot tell."""

    runners: frozenset[str]
    failed: int
    passed: int | None


def _counts(parts: Iterable[str], words: dict[str, str | None]) -> dict[str, int] | None:
    totals = {"failed": 0, "passed": 0}
    for part in parts:
        number, _, word = part.strip().partition(" ")
        if not _COUNT.fullmatch(number) or word not in words:
            return None
        if (kind := words[word]) is not None:
            totals[kind] += int(number)
    return totals


def _pytest(line: str) -> dict[str, int] | None:
    """`==== 1 failed, 3 passed, 2 warnings in 0.12s ====` (or without the rules, with -q)."""
    body, found, elapsed = line.strip("= ").rpartition(" in ")
    if not found or not _PYTEST_TIME.fullmatch(elapsed):
        return None
    return _counts(body.split(","), _PYTEST_WORDS)


def _cargo(line: str) -> dict[str, int] | None:
    """`test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; ...`."""
    if not line.startswith("test result: "):
        return None
    _, _, counts = line.partition(". ")
    totals = {"failed": 0, "passed": 0}
    for part in counts.split(";"):
        number, _, word = part.strip().partition(" ")
        if word in totals and _COUNT.fullmatch(number):
            totals[word] += int(number)
    return totals


def _ctest(line: str) -> dict[str, int] | None:
    """`67% tests passed, 1 tests failed out of 3`."""
    found = _CTEST.fullmatch(line.strip())
    if found is None:
        return None
    failed, total = int(found[1]), int(found[2])
    return {"failed": failed, "passed": max(total - failed, 0)}


def runner_summary(logs: Iterable[tuple[str, bool]]) -> RunnerSummary | None:
    """Sum the summary lines found in `(log, truncated)` pairs; None if there is none.

    `go test` has no count line without -v: its failures are its `--- FAIL:` lines (plain or
    inside -json output), and its passes unknown. Passes are unknown too when a log was cut,
    since summary lines may have been dropped with the middle.
    """
    runners: set[str] = set()
    failed, passed, passes_known = 0, 0, True
    for log, truncated in logs:
        passes_known = passes_known and not truncated
        for raw in log.splitlines():
            line = raw[:MAX_LINE]
            if "--- FAIL: " in line:
                runners.add("go test")
                failed += 1
                continue
            for runner, parse in (("pytest", _pytest), ("cargo test", _cargo), ("ctest", _ctest)):
                if (counts := parse(line)) is not None:
                    runners.add(runner)
                    failed += counts["failed"]
                    passed += counts["passed"]
                    break
    if not runners:
        return None
    if "go test" in runners:
        passes_known = False
    return RunnerSummary(frozenset(runners), failed, passed if passes_known else None)


def contradiction(summary: RunnerSummary | None, tests: dict[str, TestOutcome]) -> str | None:
    """Why the report cannot be believed, or None when it agrees with the runners' summary."""
    if summary is None:
        return None
    failing = sum(1 for o in tests.values() if o in (TestOutcome.FAILED, TestOutcome.ERROR))
    passing = sum(1 for o in tests.values() if o is TestOutcome.PASSED)
    who = ", ".join(sorted(summary.runners))
    if summary.failed and not failing:
        return (
            f"report contradicts the test runner: {who} printed {summary.failed} failed, "
            "the report none"
        )
    if summary.passed is not None and passing > summary.passed:
        return (
            f"report contradicts the test runner: the report has {passing} passed, {who} "
            f"printed {summary.passed}"
        )
    return None
