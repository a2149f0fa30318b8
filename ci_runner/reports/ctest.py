"""ctest: its JUnit file (`--output-junit`) or its console summary lines."""

import re

from ci_runner.reports.junit import case_id, case_outcome, junit_root
from ci_runner.reports.outcomes import Outcomes, record
from ci_runner.types import TestOutcome

_LINE = re.compile(
    r"^\s*\d+/\d+\s+Test\s+#\d+:\s+(?P<name>\S+)\s+\.*\s*(?P<verdict>\*{0,3}[A-Za-z][^\d]*?)\s+[\d.]+\s+sec",
    re.MULTILINE,
)
_STATUS = {
    "run": TestOutcome.PASSED,
    "fail": TestOutcome.FAILED,
    "notrun": TestOutcome.SKIPPED,
    "disabled": TestOutcome.SKIPPED,
}


def _verdict(text: str) -> TestOutcome:
    text = text.strip("* ").lower()
    if text == "passed":
        return TestOutcome.PASSED
    if text.startswith(("not run", "skipped", "disabled")):
        return TestOutcome.SKIPPED
    if text.startswith("failed"):
        return TestOutcome.FAILED
    return TestOutcome.ERROR  # Timeout, Exception: SegFault, ...


def parse_ctest(data: bytes) -> Outcomes:
    outcomes: Outcomes = {}
    if data.lstrip().startswith(b"<"):
        for case in junit_root(data).iter("testcase"):
            outcome = case_outcome(case)
            status = case.get("status")
            if outcome is TestOutcome.PASSED and status in _STATUS:
                outcome = _STATUS[status]
            record(outcomes, case_id(case), outcome)
        return outcomes
    for match in _LINE.finditer(data.decode("utf-8", errors="replace")):
        record(outcomes, match["name"], _verdict(match["verdict"]))
    return outcomes
