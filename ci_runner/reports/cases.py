"""The per-case report of one C++ test binary: GoogleTest's XML, doctest's and Catch2's `xml`.

Cases are named as their framework names them, and as `gtest_discover_tests`,
`doctest_discover_tests` and `catch_discover_tests` name the ctest tests of a binary whose
cases are registered one by one: GoogleTest's `Suite.Name` (`Suite/0.Name` for a typed test,
`Prefix/Suite.Name/0` for a parameterized one), doctest's and Catch2's test case names (a
SUBCASE or SECTION is part of its case). A report cut short (the binary crashed while writing
it) is read up to its last complete case, and the case it was writing is an error.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from xml.etree.ElementTree import Element, ParseError

import defusedxml.ElementTree as safe_xml
from defusedxml import DefusedXmlException

from ci_runner.errors import ReportError
from ci_runner.languages.outcomes import Outcomes, record
from ci_runner.types import TestOutcome

# root element of each framework's report: GoogleTest, doctest, Catch2 2.x and 3.x
ROOTS = ("testsuites", "testsuite", "doctest", "Catch", "Catch2TestRun")


def _gtest_case(case: Element) -> tuple[str, TestOutcome] | None:
    name = case.get("name", "").strip()
    suite = case.get("classname", "").strip()
    if not name:
        return None  # a failure outside any test (SetUpTestSuite): the exit code tells
    tags = {child.tag for child in case}
    if "error" in tags:
        outcome = TestOutcome.ERROR
    elif "failure" in tags:
        outcome = TestOutcome.FAILED
    elif "skipped" in tags or case.get("result") == "skipped" or case.get("status") == "notrun":
        outcome = TestOutcome.SKIPPED
    else:
        outcome = TestOutcome.PASSED
    return (f"{suite}.{name}" if suite else name), outcome


def _framework_case(case: Element) -> tuple[str, TestOutcome] | None:
    """doctest's `<TestCase>` with `<OverallResultsAsserts test_case_success=...>`, Catch2's
    with `<OverallResult success=... skips=...>`."""
    name = case.get("name", "").strip()
    if not name:
        return None
    if case.get("skipped") == "true":
        return name, TestOutcome.SKIPPED
    doctest = case.find("OverallResultsAsserts")
    catch = case.find("OverallResult")
    if doctest is not None:
        success = doctest.get("test_case_success") == "true"
    elif catch is not None:
        success = catch.get("success") == "true"
        if success and catch.get("skips", "0") not in ("", "0"):
            return name, TestOutcome.SKIPPED
    else:
        return name, TestOutcome.ERROR  # the case never finished
    return name, TestOutcome.PASSED if success else TestOutcome.FAILED


_CASES: dict[str, Callable[[Element], tuple[str, TestOutcome] | None]] = {
    "testcase": _gtest_case,
    "TestCase": _framework_case,
}
# a case's children its outcome is read from
_DECISIVE = frozenset({"failure", "error", "skipped", "OverallResult", "OverallResultsAsserts"})


def _drop(parent: Element, child: Element) -> None:
    """Remove an element whose end was read. Events come a chunk behind the parse, so the
    parent may hold later siblings already: the child is found from the end."""
    for index in range(len(parent) - 1, -1, -1):
        if parent[index] is child:
            del parent[index]
            return


def _first_decisive(case: Element, child: Element) -> bool:
    return child.tag in _DECISIVE and sum(1 for c in case if c.tag == child.tag) == 1


def parse_cases(data: bytes) -> Outcomes:
    """The cases of a framework's report, as far as it is complete; ReportError when it is no
    such report at all (empty, another root, a DTD or entities).

    Read as a stream that keeps only the open elements and the children of the open case that
    decide its outcome, so a report's size never decides the memory it takes."""
    outcomes: Outcomes = {}
    root: str | None = None
    open_elements: list[Element] = []
    case: Element | None = None  # the case whose end is not read yet
    try:
        for event, element in safe_xml.iterparse(io.BytesIO(data), events=("start", "end")):
            if event == "start":
                if root is None:
                    root = element.tag
                    if root not in ROOTS:
                        raise ReportError(f"<{root}> is not the root of a test binary's report")
                elif case is None and element.tag in _CASES:
                    case = element
                open_elements.append(element)
                continue
            open_elements.pop()
            parent = open_elements[-1] if open_elements else None
            if case is not None and element is case:
                found = _CASES[case.tag](case)
                if found is not None:
                    record(outcomes, *found)
                case = None
            elif case is not None and parent is case and _first_decisive(case, element):
                continue  # kept: the case's outcome is read from it
            if parent is not None:
                _drop(parent, element)
    except DefusedXmlException as exc:
        raise ReportError(f"the test binary's report is refused: {exc}") from exc
    except ParseError as exc:
        if root is None:
            raise ReportError(f"the test binary's report is not XML: {exc}") from exc
        name = case.get("name", "").strip() if case is not None else ""
        if case is not None and case.tag == "TestCase" and name:
            record(outcomes, name, TestOutcome.ERROR)  # the binary died in it (doctest, Catch2)
    return outcomes
