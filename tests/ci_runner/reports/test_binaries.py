"""Test binaries ctest runs whole: their listing, their frameworks' reports, their cases as ids.

The reports and the listing are real outputs (GoogleTest 1.12, doctest 2.4.9, Catch2 2.13,
ctest 3.25 of Debian bookworm), trimmed.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ci_runner.errors import ReportError
from ci_runner.reports.binaries import (
    NOT_A_FRAMEWORK,
    WholeBinary,
    case_run_script,
    discovery_script,
    parse_discovery,
    whole_binaries,
    with_cases,
)
from ci_runner.reports.cases import parse_cases
from ci_runner.types import TestOutcome as T

GTEST_XML = b"""<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="8" failures="1" disabled="1" errors="0" time="0" name="AllTests">
  <testsuite name="Math" tests="4" failures="1" disabled="1" skipped="1" errors="0" time="0">
    <testcase name="Adds" file="/w/gtests.cpp" line="2" status="run" result="completed" time="0" classname="Math" />
    <testcase name="Fails" file="/w/gtests.cpp" line="3" status="run" result="completed" time="0" classname="Math">
      <failure message="/w/gtests.cpp:3&#x0A;Expected equality" type=""><![CDATA[/w/gtests.cpp:3
Expected equality]]></failure>
    </testcase>
    <testcase name="Skips" file="/w/gtests.cpp" line="11" status="run" result="skipped" time="0" classname="Math">
      <skipped message="/w/gtests.cpp:11&#x0A;no"><![CDATA[no]]></skipped>
    </testcase>
    <testcase name="DISABLED_Off" file="/w/gtests.cpp" line="12" status="notrun" result="suppressed" time="0" classname="Math" />
  </testsuite>
  <testsuite name="Typed/0" tests="1" failures="0" disabled="0" skipped="0" errors="0" time="0">
    <testcase name="Zero" type_param="int" file="/w/gtests.cpp" line="7" status="run" result="completed" time="0" classname="Typed/0" />
  </testsuite>
  <testsuite name="Typed/1" tests="1" failures="0" disabled="0" skipped="0" errors="0" time="0">
    <testcase name="Zero" type_param="char" file="/w/gtests.cpp" line="7" status="run" result="completed" time="0" classname="Typed/1" />
  </testsuite>
  <testsuite name="Small/Param" tests="2" failures="0" disabled="0" skipped="0" errors="0" time="0">
    <testcase name="Positive/0" value_param="1" file="/w/gtests.cpp" line="9" status="run" result="completed" time="0" classname="Small/Param" />
    <testcase name="Positive/1" value_param="2" file="/w/gtests.cpp" line="9" status="run" result="completed" time="0" classname="Small/Param" />
  </testsuite>
</testsuites>
"""

DOCTEST_XML = b"""<?xml version="1.0" encoding="UTF-8"?>
<doctest binary="./dtests" version="2.4.9">
  <Options order_by="file" rand_seed="0" first="0" last="4294967295" abort_after="0" subcase_filter_levels="2147483647" case_sensitive="false" no_throw="false" no_skip="false"/>
  <TestSuite>
    <TestCase name="adds" filename="/w/dtests.cpp" line="3">
      <OverallResultsAsserts successes="1" failures="0" test_case_success="true"/>
    </TestCase>
    <TestCase name="fails" filename="/w/dtests.cpp" line="4">
      <Expression success="false" type="CHECK" filename="/w/dtests.cpp" line="4">
        <Original>1 + 1 == 3</Original>
        <Expanded>2 == 3</Expanded>
      </Expression>
      <OverallResultsAsserts successes="0" failures="1" test_case_success="false"/>
    </TestCase>
  </TestSuite>
  <TestSuite name="strings">
    <TestCase name="with subcases" filename="/w/dtests.cpp" line="6">
      <SubCase name="a" filename="/w/dtests.cpp" line="7">
      </SubCase>
      <SubCase name="b" filename="/w/dtests.cpp" line="8">
        <Expression success="false" type="CHECK" filename="/w/dtests.cpp" line="8">
          <Original>false</Original>
          <Expanded>false</Expanded>
        </Expression>
      </SubCase>
      <OverallResultsAsserts successes="1" failures="1" test_case_success="false"/>
    </TestCase>
  </TestSuite>
  <TestSuite>
    <TestCase name="skipped" filename="/w/dtests.cpp" line="11" skipped="true"/>
    <TestCase name="tmpl&lt;int>" filename="/w/dtests.cpp" line="12">
      <OverallResultsAsserts successes="1" failures="0" test_case_success="true"/>
    </TestCase>
  </TestSuite>
  <OverallResultsAsserts successes="4" failures="2"/>
  <OverallResultsTestCases successes="3" failures="2" skipped="1"/>
</doctest>
"""

CATCH2_XML = b"""<?xml version="1.0" encoding="UTF-8"?>
<Catch name="ctests">
  <Group name="ctests">
    <TestCase name="adds" tags="[math]" filename="/w/ctests.cpp" line="3">
      <OverallResult success="true"/>
    </TestCase>
    <TestCase name="sections" filename="/w/ctests.cpp" line="5">
      <Section name="a" filename="/w/ctests.cpp" line="6">
        <OverallResults successes="1" failures="0" expectedFailures="0"/>
      </Section>
      <Section name="b" filename="/w/ctests.cpp" line="7">
        <Expression success="false" type="CHECK" filename="/w/ctests.cpp" line="7">
          <Original>false</Original>
          <Expanded>false</Expanded>
        </Expression>
        <OverallResults successes="0" failures="1" expectedFailures="0"/>
      </Section>
      <OverallResult success="false"/>
    </TestCase>
    <TestCase name="Scenario: scenario x" filename="/w/ctests.cpp" line="9">
      <Section name="Given: g" filename="/w/ctests.cpp" line="9">
        <OverallResults successes="1" failures="0" expectedFailures="0"/>
      </Section>
      <OverallResult success="true"/>
    </TestCase>
    <TestCase name="tmpl - float" filename="/w/ctests.cpp" line="11">
      <OverallResult success="true"/>
    </TestCase>
    <OverallResults successes="5" failures="2" expectedFailures="0"/>
  </Group>
</Catch>
"""

# Catch2 3.x: another root, and a skipped case is a success with skips
CATCH3_XML = b"""<?xml version="1.0" encoding="UTF-8"?>
<Catch2TestRun name="tests" rng-seed="1" xml-format-version="3" catch2-version="3.4.0">
  <TestCase name="adds" filename="t.cpp" line="3">
    <OverallResult success="true" skips="0"/>
  </TestCase>
  <TestCase name="later" filename="t.cpp" line="4">
    <Skip filename="t.cpp" line="4">not yet</Skip>
    <OverallResult success="true" skips="1"/>
  </TestCase>
</Catch2TestRun>
"""


def test_gtest_cases_are_named_as_gtest_names_them() -> None:
    assert parse_cases(GTEST_XML) == {
        "Math.Adds": T.PASSED,
        "Math.Fails": T.FAILED,
        "Math.Skips": T.SKIPPED,
        "Math.DISABLED_Off": T.SKIPPED,
        "Typed/0.Zero": T.PASSED,
        "Typed/1.Zero": T.PASSED,
        "Small/Param.Positive/0": T.PASSED,
        "Small/Param.Positive/1": T.PASSED,
    }


def test_doctest_cases_with_their_subcases_folded_in() -> None:
    assert parse_cases(DOCTEST_XML) == {
        "adds": T.PASSED,
        "fails": T.FAILED,
        "with subcases": T.FAILED,
        "skipped": T.SKIPPED,
        "tmpl<int>": T.PASSED,
    }


def test_catch2_cases_with_their_sections_folded_in() -> None:
    assert parse_cases(CATCH2_XML) == {
        "adds": T.PASSED,
        "sections": T.FAILED,
        "Scenario: scenario x": T.PASSED,
        "tmpl - float": T.PASSED,
    }
    assert parse_cases(CATCH3_XML) == {"adds": T.PASSED, "later": T.SKIPPED}


def test_a_report_cut_short_keeps_its_complete_cases_and_the_open_one_errs() -> None:
    cut = DOCTEST_XML[: DOCTEST_XML.index(b'<SubCase name="b"')]
    assert parse_cases(cut) == {"adds": T.PASSED, "fails": T.FAILED, "with subcases": T.ERROR}
    between = CATCH2_XML[: CATCH2_XML.index(b'<TestCase name="sections"')]
    assert parse_cases(between) == {"adds": T.PASSED}


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"not xml at all",
        b"<html><body>hi</body></html>",
        b'<!DOCTYPE x [<!ENTITY a "aaaa">]><doctest>&a;</doctest>',
    ],
)
def test_anything_else_is_no_report(data: bytes) -> None:
    with pytest.raises(ReportError):
        parse_cases(data)


def test_a_huge_report_is_read_keeping_only_the_open_case() -> None:
    """The code under test writes the report: its size must not decide the memory it takes."""
    import tracemalloc

    noise = b'<Expression success="false"><Original>x</Original></Expression>' * 30_000  # 1.9 MB
    data = (
        b'<doctest><TestSuite><TestCase name="big">'
        + noise
        + b'<OverallResultsAsserts test_case_success="false"/></TestCase>'
        + b'<TestCase name="small"><OverallResultsAsserts test_case_success="true"/></TestCase>'
        + b"</TestSuite></doctest>"
    )
    tracemalloc.start()
    try:
        assert parse_cases(data) == {"big": T.FAILED, "small": T.PASSED}
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < len(data) // 4, peak


# --- which tests run a binary whole -------------------------------------------------------


def _listing(*tests: dict[str, Any]) -> bytes:
    return json.dumps({"kind": "ctestInfo", "version": {"major": 1}, "tests": tests}).encode()


def _test(name: str, *command: str, **properties: Any) -> dict[str, Any]:
    listed: dict[str, Any] = {"name": name, "command": list(command)}
    listed["properties"] = [{"name": k, "value": v} for k, v in properties.items()]
    return listed


BUILD = "/workspace/build"
LISTING = _listing(
    _test("unit_tests", f"{BUILD}/unit_tests", WORKING_DIRECTORY=BUILD),
    _test(
        "doc_tests",
        f"{BUILD}/doc_tests",
        "--no-colors",
        ENVIRONMENT=["DATA=/workspace/data", "not an assignment"],
        WORKING_DIRECTORY=f"{BUILD}/sub",
        TIMEOUT=60,
    ),
    # registered case by case (gtest_discover_tests): its cases are ids already
    _test("Math.Adds", f"{BUILD}/math", "--gtest_filter=Math.Adds", WORKING_DIRECTORY=BUILD),
    _test("Math.Subs", f"{BUILD}/math", "--gtest_filter=Math.Subs", WORKING_DIRECTORY=BUILD),
    _test("one_case", f"{BUILD}/single", "--gtest_filter=Only.One", WORKING_DIRECTORY=BUILD),
    _test("tagged", f"{BUILD}/catch_tests", "[fast]", WORKING_DIRECTORY=BUILD),
    _test("inverted", f"{BUILD}/fails", WILL_FAIL=True, WORKING_DIRECTORY=BUILD),
    _test("matched", f"{BUILD}/matched", PASS_REGULAR_EXPRESSION=["ok"]),
    _test("needs_db", f"{BUILD}/db_tests", FIXTURES_REQUIRED=["db"]),
    _test("script", "/usr/bin/python3", "/workspace/check.py", WORKING_DIRECTORY=BUILD),
    _test("not_run", f"{BUILD}/other", WORKING_DIRECTORY=BUILD),
)
RAN = {"unit_tests", "doc_tests", "Math.Adds", "Math.Subs", "one_case", "tagged", "inverted"}
RAN |= {"matched", "needs_db", "script"}


def test_only_binaries_registered_once_and_run_as_they_are_are_whole() -> None:
    found = whole_binaries([(BUILD, LISTING)], RAN, "/workspace")
    assert found == [
        WholeBinary("unit_tests", (f"{BUILD}/unit_tests",), BUILD, (), None),
        WholeBinary(
            "doc_tests",
            (f"{BUILD}/doc_tests", "--no-colors"),
            f"{BUILD}/sub",
            ("DATA=/workspace/data",),
            60.0,
        ),
    ]


def test_the_build_tree_ctest_ran_is_the_one_whose_tests_the_report_names() -> None:
    other = _listing(_test("unit_tests", "/workspace/old/unit_tests"))
    found = whole_binaries([("/workspace/old", other), (BUILD, LISTING)], RAN, "/workspace")
    assert [b.command[0] for b in found] == [f"{BUILD}/unit_tests", f"{BUILD}/doc_tests"]
    assert whole_binaries([(BUILD, b"{not json"), (BUILD, b"[]")], RAN, "/workspace") == []
    assert whole_binaries([(BUILD, LISTING)], {"not_listed"}, "/workspace") == []


@pytest.mark.parametrize(
    "listing",
    [
        b"[" * 100_000 + b"]" * 100_000,  # deeper than the JSON parser goes
        json.dumps({"tests": [{"name": ["unit_tests"], "command": ["/workspace/b/t"]}]}).encode(),
        json.dumps({"tests": [{"name": "unit_tests", "command": "/workspace/b/t"}]}).encode(),
        json.dumps({"tests": [{"name": "unit_tests", "command": [1, 2]}]}).encode(),
        json.dumps({"tests": {"name": "unit_tests"}}).encode(),
        json.dumps([{"name": "unit_tests"}]).encode(),
    ],
)
def test_a_listing_the_code_under_test_garbled_names_no_binary(listing: bytes) -> None:
    """The project's CTest scripts run while ctest lists them, and may write anything."""
    assert whole_binaries([(BUILD, listing)], RAN, "/workspace") == []


def test_odd_properties_are_read_as_ctest_reads_them() -> None:
    listing = _listing(
        _test("a", f"{BUILD}/a", properties_are="ignored", WILL_FAIL="OFF", TIMEOUT=True),
        _test("b", f"{BUILD}/b", ENVIRONMENT="A=1;B=2", WORKING_DIRECTORY="relative"),
        _test("c", f"{BUILD}/c", DISABLED="ON"),
        _test("d", "/workspace/../usr/bin/d"),
    )
    found = whole_binaries([(BUILD, listing)], {"a", "b", "c", "d"}, "/workspace")
    assert [(b.name, b.workdir, b.environment, b.timeout_s) for b in found] == [
        ("a", BUILD, (), None),
        ("b", BUILD, ("A=1", "B=2"), None),
    ]


def test_the_discovery_lines_name_the_listing_files() -> None:
    output = (
        "out\t/tmp/arena-cases.AbC123\ntree\t1\t/workspace/build\ntree\tx\t/bad\n"
        "tree\t2\trelative\nnoise\n"
    )
    found = parse_discovery(output)
    assert found is not None and found.out == "/tmp/arena-cases.AbC123"
    assert found.trees == (("/tmp/arena-cases.AbC123/ctest-1.json", "/workspace/build"),)
    assert parse_discovery("tree\t1\t/workspace/build\n") is None
    assert "ctest --show-only=json-v1" in discovery_script("/workspace")


def test_a_case_run_runs_the_binary_as_ctest_did_with_its_frameworks_reporter() -> None:
    binary = WholeBinary(
        "doc tests", ("/workspace/b/doc tests", "--no-colors"), "/workspace/b", ("A=1 2",), 30.0
    )
    script = case_run_script(binary, "/tmp/arena-cases.x/cases-1.xml", 500.0)
    assert script.startswith("cd /workspace/b\n")
    assert "--reporters=xml --out=/tmp/arena-cases.x/cases-1.xml" in script  # doctest
    assert "--gtest_output=xml:/tmp/arena-cases.x/cases-1.xml" in script
    assert "-r xml -o /tmp/arena-cases.x/cases-1.xml" in script  # Catch2
    assert f"exit {NOT_A_FRAMEWORK}" in script
    assert script.endswith(
        "exec env -- 'A=1 2' timeout -k 5 30 '/workspace/b/doc tests' --no-colors \"$@\"\n"
    )


# --- the cases in place of the binary's id ---------------------------------------------------


def test_the_cases_take_the_place_of_the_binarys_id() -> None:
    tests = {"before": T.PASSED, "unit_tests": T.FAILED, "after": T.PASSED}
    cases = {"Math.Adds": T.PASSED, "Math.Fails": T.FAILED}
    merged = with_cases(tests, "unit_tests", cases, 1)
    assert list(merged.items()) == [
        ("before", T.PASSED),
        ("unit_tests::Math.Adds", T.PASSED),
        ("unit_tests::Math.Fails", T.FAILED),
        ("after", T.PASSED),
    ]
    passing = with_cases({"unit_tests": T.PASSED}, "unit_tests", {"Math.Adds": T.PASSED}, 0)
    assert passing == {"unit_tests::Math.Adds": T.PASSED}


@pytest.mark.parametrize(
    ("ran", "exit_code", "kept"),
    [
        (T.FAILED, 0, T.FAILED),  # ctest saw it fail (a leak checker at exit), our run did not
        (T.ERROR, 0, T.ERROR),
        (T.PASSED, 134, T.FAILED),  # our run crashed after its last case
    ],
)
def test_a_failure_no_case_explains_keeps_the_binarys_id_failed(
    ran: T, exit_code: int, kept: T
) -> None:
    merged = with_cases({"unit_tests": ran}, "unit_tests", {"Math.Adds": T.PASSED}, exit_code)
    assert merged == {"unit_tests::Math.Adds": T.PASSED, "unit_tests": kept}
