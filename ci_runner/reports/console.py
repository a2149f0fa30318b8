"""Test results read from console output, for runners wrapped so that no report file appears.

Understands pytest's `-rA` short summary, `go test -v`, cargo's libtest and nextest lines,
ctest's console lines and `python -m unittest -v`. Ids match the ones the report-file parsers
give (pytest ids in JUnit's `module.Class::name` shape, Go's `package::Test`), so a run read
either way compares; unittest, which writes no report, gives `module.Class.test_name`.
Linear time: lines are capped at MAX_LINE characters and each is matched a bounded number
of times by anchored patterns.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ci_runner.reports.ctest import parse_ctest
from ci_runner.reports.libtest import parse_libtest
from ci_runner.reports.outcomes import Outcomes, record
from ci_runner.types import TestOutcome

MAX_LINE = 4096

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

_GO_RESULT = re.compile(r"^\s*--- (?P<verdict>PASS|FAIL|SKIP): (?P<name>\S+) \([\d.]+s\)")
_GO_PACKAGE = re.compile(
    r"^(?P<verdict>ok|FAIL|\?)\s+(?P<package>[^\s\[]+)(?:\s+\[(?P<note>[^\]]{0,100})\]|\s|$)"
)
_GO_VERDICT = {"PASS": TestOutcome.PASSED, "FAIL": TestOutcome.FAILED, "SKIP": TestOutcome.SKIPPED}

_NEXTEST = re.compile(
    r"^\s*(?P<verdict>PASS|FAIL|SKIP|SIGSEGV|SIGABRT|TIMEOUT|LEAK)\s+\[\s*[\d.]+s\]\s+"
    r"(?P<binary>\S+)\s+(?P<name>\S+)\s*$"
)

# `test_x (pkg.module.Class.test_x)` (Python 3.11+) or `test_x (pkg.module.Class)`, then a
# subtest's ` (i=1)` or ` [msg]`, and ` ... verdict` on this line or after a docstring line
_UNITTEST_TEST = re.compile(
    r"^(?P<name>[A-Za-z_]\w{0,300}) \((?P<where>[A-Za-z_][\w.]{0,1000})\)(?: [(\[].*)?$"
)
_UNITTEST_SEPARATOR = " ... "


def _lines(text: str) -> list[str]:
    return [line[:MAX_LINE].rstrip("\r") for line in text.splitlines()]


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


def parse_console(text: str) -> Outcomes:
    """Every test result any known runner printed in `text`."""
    lines = _lines(text)
    capped = "\n".join(lines).encode()
    outcomes: Outcomes = {}
    parsers: tuple[Callable[[], Outcomes], ...] = (
        lambda: parse_pytest_summary(lines),
        lambda: parse_go_verbose(lines),
        lambda: parse_nextest(lines),
        lambda: parse_unittest_verbose(lines),
        lambda: parse_libtest(capped),
        lambda: parse_ctest(capped.lstrip(b"<")),  # text lines only, never its JUnit mode
    )
    for parse in parsers:
        for test_id, outcome in parse().items():
            record(outcomes, test_id, outcome)
    return outcomes
