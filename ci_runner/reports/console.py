"""Test results read from console output, for runners wrapped so that no report file appears.

Understands pytest's `-rA` short summary, `go test -v`, cargo's libtest and nextest lines, and
ctest's console lines. Ids match the ones the report-file parsers give (pytest ids in JUnit's
`module.Class::name` shape, Go's `package::Test`), so a run read either way compares.
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
        lambda: parse_libtest(capped),
        lambda: parse_ctest(capped.lstrip(b"<")),  # text lines only, never its JUnit mode
    )
    for parse in parsers:
        for test_id, outcome in parse().items():
            record(outcomes, test_id, outcome)
    return outcomes
