"""JUnit XML (pytest --junitxml, ctest --output-junit, most other tools), read as a stream.

A report is written by the code under test, so it may be built to cost: each <testcase> is
handled and dropped as soon as it ends (memory follows one case, not the file), nesting deeper
than any real report refuses it, and DTDs and entities are refused by defusedxml.
"""

import io
from collections.abc import Iterator
from xml.etree.ElementTree import Element, ParseError

import defusedxml.ElementTree as safe_xml
from defusedxml import DefusedXmlException

from ci_runner.errors import ReportError
from ci_runner.languages.outcomes import Outcomes, record
from ci_runner.types import TestOutcome

# real reports nest suites a few levels deep; a hostile one nests for memory and time
MAX_DEPTH = 64


def junit_cases(data: bytes) -> Iterator[Element]:
    """Each <testcase> of a JUnit report, complete; once the caller moves on it is dropped
    from its parent, so memory follows the open elements, not the file."""
    open_elements: list[Element] = []
    try:
        for event, element in safe_xml.iterparse(io.BytesIO(data), events=("start", "end")):
            if event == "start":
                if not open_elements and element.tag not in ("testsuites", "testsuite"):
                    raise ReportError(
                        f"the JUnit report's root is <{element.tag}>, not <testsuites>/<testsuite>"
                    )
                open_elements.append(element)
                if len(open_elements) > MAX_DEPTH:
                    raise ReportError(f"the JUnit report nests deeper than {MAX_DEPTH} elements")
                continue
            open_elements.pop()
            if element.tag == "testcase":
                yield element
            parent = open_elements[-1] if open_elements else None
            # read and done with: dropped, except what an open case's outcome is read from.
            # The parser reads ahead, so siblings after this one may hang there already: they
            # go too (the parser still fills them, and hands each over at its own end)
            if parent is not None and parent.tag != "testcase":
                del parent[:]
    except (ParseError, DefusedXmlException) as exc:
        raise ReportError(f"the JUnit report is not valid XML: {exc}") from exc


def case_id(case: Element) -> str:
    name = case.get("name", "").strip()
    classname = case.get("classname", "").strip()
    if not name:
        raise ReportError("a <testcase> in the JUnit report has no name")
    return f"{classname}::{name}" if classname and classname != name else name


def case_outcome(case: Element) -> TestOutcome:
    tags = {child.tag for child in case}
    if "error" in tags:
        return TestOutcome.ERROR
    if "failure" in tags:
        return TestOutcome.FAILED
    if "skipped" in tags:
        return TestOutcome.SKIPPED
    return TestOutcome.PASSED


def parse_junit(data: bytes) -> Outcomes:
    outcomes: Outcomes = {}
    for case in junit_cases(data):
        record(outcomes, case_id(case), case_outcome(case))
    return outcomes
