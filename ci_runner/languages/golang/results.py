"""`go test`'s results: its `-json` report, its `-v` lines in a log, and its `--- FAIL:` lines,
which count its failures (without -v it prints no count line, so its passes stay unknown)."""

from __future__ import annotations

import re

from ci_runner.languages.golang.gojson import parse_go_json
from ci_runner.languages.outcomes import Outcomes, record
from ci_runner.languages.results import Counts, ResultRules, SummaryRule
from ci_runner.pipeline import ReportFormat
from ci_runner.types import TestOutcome

_GO_RESULT = re.compile(r"^\s*--- (?P<verdict>PASS|FAIL|SKIP): (?P<name>\S+) \([\d.]+s\)")
_GO_PACKAGE = re.compile(
    r"^(?P<verdict>ok|FAIL|\?)\s+(?P<package>[^\s\[]+)(?:\s+\[(?P<note>[^\]]{0,100})\]|\s|$)"
)
_GO_VERDICT = {"PASS": TestOutcome.PASSED, "FAIL": TestOutcome.FAILED, "SKIP": TestOutcome.SKIPPED}


def parse_go_verbose(lines: list[str]) -> Outcomes:
    outcomes: Outcomes = {}
    pending: list[tuple[str, TestOutcome]] = []
    for line in lines:
        if found := _GO_RESULT.match(line):
            pending.append((found["name"], _GO_VERDICT[found["verdict"]]))
        elif package := _GO_PACKAGE.match(line):
            name = package["package"]
            for test, outcome in pending:
                record(outcomes, f"{name}::{test}", outcome)
            if package["verdict"] == "FAIL" and not pending:
                record(outcomes, f"{name}::(package)", TestOutcome.ERROR)
            pending = []
    for test, outcome in pending:  # no package line followed: keep the bare names
        record(outcomes, test, outcome)
    return outcomes


def failure_line(line: str) -> Counts | None:
    """A `--- FAIL: ` line, plain or inside -json output: one failure."""
    return {"failed": 1, "passed": 0} if "--- FAIL: " in line else None


RESULTS = ResultRules(
    reports={ReportFormat.GO_JSON: parse_go_json},
    console=(parse_go_verbose,),
    summaries=(SummaryRule("go test", failure_line, passes_known=False),),
)
