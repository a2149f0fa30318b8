"""Rust's libtest text output (`cargo test`), one id per test binary and test.

Doctest names carry the line of their code block (`src/lib.rs - double (line 14)`); the id
drops it (`doc:crate::src/lib.rs - double`), so that a fix of a different length, which moves
the block, still names the same test. An item's several doctests share that id (the worst
outcome stands), as they document one item."""

import re

from ci_runner.reports.outcomes import Outcomes, record
from ci_runner.types import TestOutcome

_RUNNING = re.compile(r"^\s*Running\s+(?:unittests\s+)?(?P<source>\S+)")
_DOCTESTS = re.compile(r"^\s*Doc-tests\s+(?P<crate>\S+)")
_TEST = re.compile(r"^test\s+(?P<name>.+?)\s+\.\.\.\s+(?P<verdict>ok|FAILED|ignored)\b")
_DOCTEST_LINE = re.compile(r" \(line \d+\)")
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
            name = _DOCTEST_LINE.sub("", test["name"])  # only doctest names hold spaces
            test_id = f"{prefix}::{name}" if prefix else name
            record(outcomes, test_id, _VERDICT[test["verdict"]])
    return outcomes
