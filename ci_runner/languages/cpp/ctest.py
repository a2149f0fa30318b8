"""ctest: its JUnit file (`--output-junit`) or its console summary lines."""

import re

from ci_runner.languages.junit import case_id, case_outcome, junit_cases
from ci_runner.languages.outcomes import Outcomes, record
from ci_runner.languages.report_lines import report_lines
from ci_runner.types import TestOutcome

# "  1/12 Test  #3: name ......   Passed    0.01 sec": bounded counts, no nested repetition
_START = re.compile(r"\d{1,9}/\d{1,9} +Test +#\d{1,9}: +")
# the dots between a name and its verdict; the verdict after them has none (a linear search:
# each candidate's look-ahead stops at the next dot)
_PAD = re.compile(r" \.+ *(?=[^. ][^.]*$)")
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


def _console_line(line: str) -> tuple[str, TestOutcome] | None:
    stripped = line.strip()
    start = _START.match(stripped)
    if start is None or not stripped.endswith(" sec"):
        return None
    body, _, seconds = stripped[start.end() : -len(" sec")].rstrip().rpartition(" ")
    pad = _PAD.search(body)
    if pad is not None:  # names hold spaces ("API Meta Data"): the name ends at its dots
        name, verdict = body[: pad.start()], body[pad.end() :]
    else:  # a name as wide as the column has no dots after it
        name, _, verdict = body.partition(" ")
    verdict = verdict.strip(" .")
    if not name or not verdict or not seconds.replace(".", "", 1).isdigit():
        return None
    return name, _verdict(verdict)


def parse_ctest(data: bytes) -> Outcomes:
    outcomes: Outcomes = {}
    if data.lstrip().startswith(b"<"):
        for case in junit_cases(data):
            outcome = case_outcome(case)
            status = case.get("status")
            if outcome is TestOutcome.PASSED and status in _STATUS:
                outcome = _STATUS[status]
            record(outcomes, case_id(case), outcome)
        return outcomes
    for line in report_lines(data):
        if (found := _console_line(line)) is not None:
            record(outcomes, *found)
    return outcomes
