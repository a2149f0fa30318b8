"""Rust's libtest text output (`cargo test`), one id per test binary and test."""

import re

from ci_runner.reports.outcomes import Outcomes, record
from ci_runner.types import TestOutcome

_RUNNING = re.compile(r"^\s*Running\s+(?:unittests\s+)?(?P<source>\S+)")
_DOCTESTS = re.compile(r"^\s*Doc-tests\s+(?P<crate>\S+)")
_TEST = re.compile(r"^test\s+(?P<name>.+?)\s+\.\.\.\s+(?P<verdict>ok|FAILED|ignored)\b")
_VERDICT = {"ok": TestOutcome.PASSED, "FAILED": TestOutcome.FAILED, "ignored": TestOutcome.SKIPPED}


def parse_libtest(data: bytes) -> Outcomes:
    outcomes: Outcomes = {}
    prefix = ""
    for line in data.decode("utf-8", errors="replace").splitlines():
        if running := _RUNNING.match(line):
            prefix = running["source"]
        elif doc := _DOCTESTS.match(line):
            prefix = f"doc:{doc['crate']}"
        elif test := _TEST.match(line):
            test_id = f"{prefix}::{test['name']}" if prefix else test["name"]
            record(outcomes, test_id, _VERDICT[test["verdict"]])
    return outcomes
