"""The summary line a test runner prints itself, to check a report file against.

Code under test can rewrite a report file (an `atexit` hook, a daemon) but the runner's own
summary line reached our log before that. pytest, `go test`, `cargo test` and ctest each
print one (each language's `ResultRules.summaries`); a report claiming fewer failures or
more passes than it is forged.
Parsed with string operations and bounded counts on bounded lines: linear in the log.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ci_runner.languages import profiles
from ci_runner.languages.report_lines import MAX_LINE
from ci_runner.types import TestOutcome


@dataclass(frozen=True)
class RunnerSummary:
    """What the runners' own summary lines add up to; `passed` is None where one cannot tell."""

    runners: frozenset[str]
    failed: int
    passed: int | None


def runner_summary(logs: Iterable[tuple[str, bool]]) -> RunnerSummary | None:
    """Sum the summary lines found in `(log, truncated)` pairs; None if there is none.

    `go test` has no count line without -v: its failures are its `--- FAIL:` lines (plain or
    inside -json output), and its passes unknown. Passes are unknown too when a log was cut,
    since summary lines may have been dropped with the middle.
    """
    runners: set[str] = set()
    failed, passed, passes_known = 0, 0, True
    rules = [rule for profile in profiles() for rule in profile.results.summaries]
    for log, truncated in logs:
        passes_known = passes_known and not truncated
        for raw in log.splitlines():
            line = raw[:MAX_LINE]
            for rule in rules:
                if (counts := rule.read(line)) is not None:
                    runners.add(rule.runner)
                    failed += counts["failed"]
                    passed += counts["passed"]
                    passes_known = passes_known and rule.passes_known
                    break
    if not runners:
        return None
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
