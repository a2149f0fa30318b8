"""JUnit XML (pytest --junitxml, ctest --output-junit, most other tools)."""

from xml.etree.ElementTree import Element, ParseError

import defusedxml.ElementTree as safe_xml
from defusedxml import DefusedXmlException

from ci_runner.errors import ReportError
from ci_runner.reports.outcomes import Outcomes, record
from ci_runner.types import TestOutcome


def junit_root(data: bytes) -> Element:
    try:
        root: Element = safe_xml.fromstring(data)
    except (ParseError, DefusedXmlException) as exc:
        raise ReportError(f"the JUnit report is not valid XML: {exc}") from exc
    if root.tag not in ("testsuites", "testsuite"):
        raise ReportError(f"the JUnit report's root is <{root.tag}>, not <testsuites>/<testsuite>")
    return root


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
    for case in junit_root(data).iter("testcase"):
        record(outcomes, case_id(case), case_outcome(case))
    return outcomes
