"""pytest's and unittest's results in a log: pytest's `-rA` short summary, `python -m unittest
-v` lines, and pytest's own summary line. Ids match the report-file parsers' (pytest ids in
JUnit's `module.Class::name` shape); unittest, which writes no report, gives
`module.Class.test_name`."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ci_runner.languages.outcomes import Outcomes, record
from ci_runner.languages.results import Counts, ResultRules, SummaryRule
from ci_runner.types import TestOutcome

_PYTEST_SECTION = re.compile(r"^=+ (?P<title>[^=]{1,200}?) =+$")
_PYTEST_RESULT = re.compile(
    r"^(?P<verdict>PASSED|FAILED|ERROR|XFAIL|XPASS)\s+(?P<id>[^\s:]+\.py(?:::\S+)+)"
)
_PYTEST_VERDICT = {
    "PASSED": TestOutcome.PASSED,
    "XPASS": TestOutcome.PASSED,
    "FAILED": TestOutcome.FAILED,
    "ERROR": TestOutcome.ERROR,
    "XFAIL": TestOutcome.SKIPPED,
}

# `test_x (pkg.module.Class.test_x)` (Python 3.11+) or `test_x (pkg.module.Class)`, then a
# subtest's ` (i=1)` or ` [msg]`, and ` ... verdict` on this line or after a docstring line
_UNITTEST_TEST = re.compile(
    r"^(?P<name>[A-Za-z_]\w{0,300}) \((?P<where>[A-Za-z_][\w.]{0,1000})\)(?: [(\[].*)?$"
)
_UNITTEST_SEPARATOR = " ... "


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


def pytest_id(location: str) -> str:
    """`tests/test_a.py::TestX::test_y[p]` in JUnit's shape: `tests.test_a.TestX::test_y[p]`."""
    path, *rest = location.split("::")
    module = path.removesuffix(".py").replace("/", ".")
    *classes, name = rest
    return f"{'.'.join([module, *classes])}::{name}"


def parse_pytest_summary(lines: list[str]) -> Outcomes:
    outcomes: Outcomes = {}
    in_summary = False
    for line in lines:
        if section := _PYTEST_SECTION.match(line):
            in_summary = "short test summary info" in section["title"]
            continue
        if in_summary and (found := _PYTEST_RESULT.match(line)):
            record(outcomes, pytest_id(found["id"]), _PYTEST_VERDICT[found["verdict"]])
    return outcomes


def _unittest_verdict(text: str) -> TestOutcome | None:
    text = text.strip()
    if text == "ok":
        return TestOutcome.PASSED
    if text in ("FAIL", "unexpected success"):  # an unexpected success fails the run
        return TestOutcome.FAILED
    if text == "ERROR":
        return TestOutcome.ERROR
    if text == "expected failure" or text == "skipped" or text.startswith("skipped "):
        return TestOutcome.SKIPPED
    return None


def _unittest_id(line: str) -> str | None:
    found = _UNITTEST_TEST.match(line)
    if found is None:
        return None
    name, where = found["name"], found["where"]
    return where if where.endswith(f".{name}") else f"{where}.{name}"


def parse_unittest_verbose(lines: list[str]) -> Outcomes:
    """`python -m unittest -v` lines: `test_x (module.Class.test_x) ... ok`; a subtest's line
    counts for its test (the worst outcome stands). A test's own output may come between
    ` ... ` and its verdict, which then stands alone on a later line."""
    outcomes: Outcomes = {}
    named: str | None = None  # a test named alone on the line before (a docstring follows)
    waiting: str | None = None  # a test whose verdict has not been printed yet
    for raw in lines:
        line = raw.strip()  # a subtest's line is indented; `... ` may have lost its space
        line += " " if line.endswith(_UNITTEST_SEPARATOR.rstrip()) else ""
        head, separator, rest = line.partition(_UNITTEST_SEPARATOR)
        if separator:
            test_id = _unittest_id(head) or named
            named = None
            if test_id is not None:
                verdict = _unittest_verdict(rest)
                waiting = test_id if verdict is None else None
                if verdict is not None:
                    record(outcomes, test_id, verdict)
            continue
        if (alone := _unittest_id(line)) is not None:
            named, waiting = alone, None
            continue
        named = None
        if waiting is not None and (verdict := _unittest_verdict(line)) is not None:
            record(outcomes, waiting, verdict)
            waiting = None
    return outcomes


def _counts(parts: Iterable[str], words: dict[str, str | None]) -> Counts | None:
    totals = {"failed": 0, "passed": 0}
    for part in parts:
        number, _, word = part.strip().partition(" ")
        if not _COUNT.fullmatch(number) or word not in words:
            return None
        if (kind := words[word]) is not None:
            totals[kind] += int(number)
    return totals


def pytest_summary(line: str) -> Counts | None:
    """`==== 1 failed, 3 passed, 2 warnings in 0.12s ====` (or without the rules, with -q)."""
    body, found, elapsed = line.strip("= ").rpartition(" in ")
    if not found or not _PYTEST_TIME.fullmatch(elapsed):
        return None
    return _counts(body.split(","), _PYTEST_WORDS)


RESULTS = ResultRules(
    console=(parse_pytest_summary, parse_unittest_verbose),
    summaries=(SummaryRule("pytest", pytest_summary),),
)
