"""Report parsers on the formats' real shapes, and their refusals."""

from __future__ import annotations

import json

import pytest

from ci_runner.errors import ReportError
from ci_runner.pipeline import ReportFormat
from ci_runner.reports import parse_report
from ci_runner.types import TestOutcome as T

PYTEST_JUNIT = b"""<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="4">
<testcase classname="tests.test_a" name="test_ok" time="0.001" />
<testcase classname="tests.test_a" name="test_bad" time="0.001"><failure message="assert 1 == 2">...</failure></testcase>
<testcase classname="tests.test_a" name="test_skip" time="0.000"><skipped message="no" /></testcase>
<testcase classname="tests.test_b" name="test_fixture" time="0.000"><error message="fixture">...</error></testcase>
<testcase classname="tests.test_b" name="test_p[1-2]" time="0.000" />
</testsuite></testsuites>"""

CTEST_JUNIT = b"""<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="Linux-c++" tests="3" failures="1" disabled="1" skipped="0" hostname="" time="0">
    <testcase name="add" classname="add" time="0.01" status="run"><system-out/></testcase>
    <testcase name="neg" classname="neg" time="0.01" status="fail"><failure message="Failed"/></testcase>
    <testcase name="off" classname="off" time="0" status="disabled"><skipped message="Disabled"/></testcase>
</testsuite>"""

CTEST_TEXT = b"""Test project /workspace/build
    Start 1: add
1/4 Test #1: add ..............................   Passed    0.00 sec
    Start 2: neg
2/4 Test #2: neg ..............................***Failed    0.00 sec
3/4 Test #3: crash ............................***Exception: SegFault  0.01 sec
4/4 Test #4: slow .............................***Timeout   1.50 sec

25% tests passed, 3 tests failed out of 4
"""

CARGO = b"""   Compiling calc v0.1.0 (/workspace)
    Finished test [unoptimized + debuginfo] target(s) in 0.50s
     Running unittests src/lib.rs (target/debug/deps/calc-1234)

running 3 tests
test tests::adds ... FAILED
test tests::negates ... ok
test tests::slow ... ignored

failures:

---- tests::adds stdout ----
thread 'tests::adds' panicked at 'assertion failed', src/lib.rs:15:9

test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out

     Running tests/integration.rs (target/debug/deps/integration-5678)

running 1 test
test adds ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out

   Doc-tests calc

running 1 test
test src/lib.rs - add (line 3) ... ok
"""


def _go_events(*events: dict[str, object]) -> bytes:
    return "\n".join(json.dumps(e) for e in events).encode()


def test_junit_from_pytest() -> None:
    assert parse_report(ReportFormat.JUNIT, PYTEST_JUNIT) == {
        "tests.test_a::test_ok": T.PASSED,
        "tests.test_a::test_bad": T.FAILED,
        "tests.test_a::test_skip": T.SKIPPED,
        "tests.test_b::test_fixture": T.ERROR,
        "tests.test_b::test_p[1-2]": T.PASSED,
    }


def test_ctest_junit_uses_status() -> None:
    assert parse_report(ReportFormat.CTEST, CTEST_JUNIT) == {
        "add": T.PASSED,
        "neg": T.FAILED,
        "off": T.SKIPPED,
    }


def test_ctest_console_lines() -> None:
    assert parse_report(ReportFormat.CTEST, CTEST_TEXT) == {
        "add": T.PASSED,
        "neg": T.FAILED,
        "crash": T.ERROR,
        "slow": T.ERROR,
    }


def test_ctest_names_with_spaces_are_whole_ids() -> None:
    # PowerGridModel's doctest cases registered one by one: "API Meta Data", "Math solver, ..."
    pad = "." * 180  # ctest pads every name to the widest one
    text = (
        f"  1/6 Test   #1: API Meta Data {pad}   Passed    0.01 sec\n"
        f"  2/6 Test   #2: Math solver, zero variance test {pad}***Failed    0.20 sec\n"
        f"  3/6 Test   #3: Seg fault case {pad}***Exception: SegFault  0.02 sec\n"
        "  4/6 Test   #4: the_widest_name_in_the_column   Passed    0.01 sec\n"
        f"  5/6 Test   #5: skip me {pad}***Not Run (Disabled)   0.00 sec\n"
        f"  6/6 Test   #6: a.b.c {pad}   Passed    0.00 sec\n"
    ).encode()
    assert parse_report(ReportFormat.CTEST, text) == {
        "API Meta Data": T.PASSED,
        "Math solver, zero variance test": T.FAILED,
        "Seg fault case": T.ERROR,
        "the_widest_name_in_the_column": T.PASSED,
        "skip me": T.SKIPPED,
        "a.b.c": T.PASSED,
    }


def test_libtest_ids_carry_their_test_binary() -> None:
    assert parse_report(ReportFormat.LIBTEST, CARGO) == {
        "src/lib.rs::tests::adds": T.FAILED,
        "src/lib.rs::tests::negates": T.PASSED,
        "src/lib.rs::tests::slow": T.SKIPPED,
        "tests/integration.rs::adds": T.PASSED,
        "doc:calc::src/lib.rs - add": T.PASSED,
    }


def test_go_json_outcomes_panics_and_build_failures() -> None:
    data = (
        _go_events(
            {"Action": "run", "Package": "ex/a", "Test": "TestOk"},
            {"Action": "pass", "Package": "ex/a", "Test": "TestOk"},
            {"Action": "run", "Package": "ex/a", "Test": "TestBad"},
            {"Action": "fail", "Package": "ex/a", "Test": "TestBad"},
            {"Action": "run", "Package": "ex/a", "Test": "TestSkip"},
            {"Action": "skip", "Package": "ex/a", "Test": "TestSkip"},
            {"Action": "run", "Package": "ex/a", "Test": "TestPanics"},
            {"Action": "output", "Package": "ex/a", "Output": "panic: boom\n"},
            {"Action": "fail", "Package": "ex/a"},
            {"Action": "output", "Package": "ex/b", "Output": "# ex/b\nb.go:3: undefined: x\n"},
            {"Action": "fail", "Package": "ex/b"},
        )
        + b"\nplain text from the build\n"
    )
    assert parse_report(ReportFormat.GO_JSON, data) == {
        "ex/a::TestOk": T.PASSED,
        "ex/a::TestBad": T.FAILED,
        "ex/a::TestSkip": T.SKIPPED,
        "ex/a::TestPanics": T.ERROR,
        "ex/b::(package)": T.ERROR,
    }


def test_a_test_seen_twice_keeps_its_worst_outcome() -> None:
    data = (
        b"<testsuite><testcase classname='c' name='t'/>"
        b"<testcase classname='c' name='t'><failure/></testcase></testsuite>"
    )
    assert parse_report(ReportFormat.JUNIT, data) == {"c::t": T.FAILED}


@pytest.mark.parametrize(
    ("report_format", "data", "message"),
    [
        (ReportFormat.JUNIT, b"", "empty"),
        (ReportFormat.JUNIT, b"<testsuite><testcase", "not valid XML"),
        (ReportFormat.JUNIT, b"<html></html>", "root is <html>"),
        (ReportFormat.JUNIT, b"<testsuite tests='0'></testsuite>", "names no tests"),
        (
            ReportFormat.JUNIT,
            b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><testsuite>&a;</testsuite>',
            "not valid XML",
        ),
        (ReportFormat.GO_JSON, b"ok  \tex/a\t0.01s\n", "no `go test -json` events"),
        (ReportFormat.LIBTEST, b"error[E0425]: cannot find value `x`\n", "names no tests"),
        (ReportFormat.CTEST, b"No tests were found!!!\n", "names no tests"),
    ],
)
def test_unusable_reports_are_errors_never_an_empty_pass(
    report_format: ReportFormat, data: bytes, message: str
) -> None:
    with pytest.raises(ReportError, match=message):
        parse_report(report_format, data)


def test_the_junit_files_pytest_says_it_wrote_are_named_once_and_only_in_the_workspace() -> None:
    from ci_runner.runner import junit_files_named

    logs = (
        "--- generated xml file: /workspace/reports/junit.xml ---\n"
        "generated xml file: /workspace/reports/junit.xml\n"
        "generated xml file: /etc/passwd.xml\n"
        "generated xml file: /workspace/../etc/x.xml\n"
        "generated xml file: /workspace/b.xml\n"
    )
    assert junit_files_named(logs) == ["/workspace/reports/junit.xml", "/workspace/b.xml"]
