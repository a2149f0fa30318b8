"""cargo's results: libtest's lines (its report is its log), nextest's lines, and libtest's
`test result:` summary line."""

from __future__ import annotations

import re

from ci_runner.languages.outcomes import Outcomes, record
from ci_runner.languages.results import Counts, ResultRules, SummaryRule
from ci_runner.languages.rust.libtest import parse_libtest
from ci_runner.pipeline import ReportFormat
from ci_runner.types import TestOutcome

_COUNT = re.compile(r"\d{1,9}")
_NEXTEST = re.compile(
    r"^\s*(?P<verdict>PASS|FAIL|SKIP|SIGSEGV|SIGABRT|TIMEOUT|LEAK)\s+\[\s*[\d.]+s\]\s+"
    r"(?P<binary>\S+)\s+(?P<name>\S+)\s*$"
)


def parse_nextest(lines: list[str]) -> Outcomes:
    outcomes: Outcomes = {}
    for line in lines:
        if found := _NEXTEST.match(line):
            verdict = found["verdict"]
            outcome = (
                TestOutcome.PASSED
                if verdict == "PASS"
                else TestOutcome.SKIPPED
                if verdict == "SKIP"
                else TestOutcome.FAILED
                if verdict == "FAIL"
                else TestOutcome.ERROR
            )
            record(outcomes, f"{found['binary']}::{found['name']}", outcome)
    return outcomes


def cargo_summary(line: str) -> Counts | None:
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


def _libtest_lines(lines: list[str]) -> Outcomes:
    return parse_libtest("\n".join(lines).encode())


RESULTS = ResultRules(
    reports={ReportFormat.LIBTEST: parse_libtest},
    console=(parse_nextest, _libtest_lines),
    summaries=(SummaryRule("cargo test", cargo_summary),),
)
