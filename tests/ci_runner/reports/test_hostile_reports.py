"""Hostile reports and logs: linear-time parsing, no crash, no control characters, caps."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable

import pytest
from rich.console import Console

from ci_runner import CIResult, CIStatus, ReportError, StepResult, TestOutcome
from ci_runner.languages.outcomes import MAX_ID_CHARS
from ci_runner.pipeline import ReportFormat
from ci_runner.reports import contradiction, parse_report, runner_summary
from ci_runner.sandbox.limits import OutputBuffer
from cli.render import render_ci_result

MIB = 1024 * 1024

HOSTILE_LINES = {
    ReportFormat.LIBTEST: [
        b"test " + b" " * MIB,
        b"test a" + b" ... " * (MIB // 5),
        b"     Running " + b" " * MIB,
    ],
    ReportFormat.CTEST: [
        b"1/1 Test #1: " + b" " * MIB,
        b"1/1 Test #1: x " + b"." * MIB + b" sec",
        b"1/1 Test #1: x " + b"a " * (MIB // 2) + b"1.0 sec",
        b"1" * MIB,
    ],
    ReportFormat.GO_JSON: [
        b'{"Action": "' + b"\\\\" * (MIB // 2) + b'"}',
        b"{" + b'"a": [' * (MIB // 8),
        b"[" * MIB,
    ],
    ReportFormat.JUNIT: [
        b'<testsuite><testcase name="' + b"a" * MIB + b'"/></testsuite>',
        b"<testsuite>" + b"<a>" * (MIB // 8) + b"</testsuite>",
    ],
}


@pytest.mark.parametrize(
    ("report_format", "line"),
    [(f, line) for f, lines in HOSTILE_LINES.items() for line in lines],
    ids=lambda v: v.value if isinstance(v, ReportFormat) else f"{v[:16]!r}",
)
def test_a_1_mib_hostile_line_parses_in_under_a_second(
    report_format: ReportFormat, line: bytes
) -> None:
    started = time.perf_counter()
    with pytest.raises(ReportError):  # nothing to believe in it: a clear error, no crash
        parse_report(report_format, b"header\n" + line + b"\n")
    assert time.perf_counter() - started < 1.0
    started = time.perf_counter()
    runner_summary([(line.decode(errors="replace"), False)])
    assert time.perf_counter() - started < 1.0


GO_PASS = b'{"Action":"pass","Package":"p","Test":"TestOk"}\n'


@pytest.mark.parametrize(
    "event",
    [
        b'{"Action": ["fail"], "Package": "p", "Test": "TestX"}',
        b'{"Action": "fail", "Package": {"a": 1}, "Test": "TestX"}',
        b'{"Action": "fail", "Package": "p", "Test": ["TestX"]}',
        b'{"Action": "pass", "Elapsed": ' + b"9" * 5000 + b', "Package": "p", "Test": "T"}',
        b'{"Action": "pass", "Test": "T", "Deep": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    ],
    ids=["action-list", "package-object", "test-list", "5000-digits", "deep-nesting"],
)
def test_go_json_events_of_the_wrong_shape_are_skipped(event: bytes) -> None:
    assert parse_report(ReportFormat.GO_JSON, event + b"\n" + GO_PASS) == {
        "p::TestOk": TestOutcome.PASSED
    }


def test_control_characters_are_stripped_from_test_ids_and_logs() -> None:
    junit = b'<testsuite><testcase name="t&#155;31m&#127;ok"/></testsuite>'  # XML bars ESC
    assert list(parse_report(ReportFormat.JUNIT, junit)) == ["t31mok"]
    libtest = b"test a\x1b]0;pwned\x07b ... ok\n"
    assert list(parse_report(ReportFormat.LIBTEST, libtest)) == ["a]0;pwnedb"]
    buffer = OutputBuffer(1024)
    buffer.append("line\x1b[31m red\r\n\ttab\x00\x9b\n".encode())
    assert buffer.text() == "line[31m red\n\ttab\n"


def test_rich_markup_in_untrusted_text_is_shown_literally() -> None:
    result = CIResult(
        status=CIStatus.FAILED,
        steps=(StepResult(name="[/]step", exit_code=1, duration_s=0.1, log="[/] [bold]x\n"),),
        tests={"test [/] [red]x[/red]": TestOutcome.FAILED},
        error="failing tests: test [/]",
    )
    console = Console(record=True, width=200, color_system=None)
    render_ci_result(console, result)
    text = console.export_text()
    assert "test [/] [red]x[/red]" in text and "[/]step" in text and "[/] [bold]x" in text


def test_the_test_count_is_capped_with_a_clear_error() -> None:
    cases = "".join(f'<testcase name="t{i}"/>' for i in range(11))
    with pytest.raises(ReportError, match="names 11 tests, over the limit of 10"):
        parse_report(ReportFormat.JUNIT, f"<testsuite>{cases}</testsuite>".encode(), 10)


def test_output_keeps_its_head_and_its_tail_where_the_summary_is() -> None:
    buffer = OutputBuffer(4096)
    buffer.append(b"start\n" + b"x" * 100_000)
    buffer.append(b"\n===== 1 failed, 2 passed in 0.10s =====\n")
    text = buffer.text()
    assert text.startswith("start") and text.endswith("1 failed, 2 passed in 0.10s =====\n")
    assert "output truncated" in text and len(text.encode()) < 4096 + 100


@pytest.mark.parametrize(
    ("log", "tests", "verdict"),
    [
        ("===== 1 failed, 2 passed in 0.1s =====", {"a": "passed", "b": "passed"}, "1 failed"),
        ("1 failed, 2 passed in 0.10s", {"a": "failed", "b": "passed", "c": "passed"}, None),
        (
            "3 passed in 0.10s",
            {"a": "passed", "b": "passed", "c": "passed", "d": "passed"},
            "4 passed",
        ),
        (
            "test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; "
            "finished in 0.00s",
            {"a": "passed", "b": "passed"},
            "1 failed",
        ),
        ("--- FAIL: TestX (0.00s)\nFAIL\tp\t0.01s", {"p::TestX": "passed"}, "1 failed"),
        ('{"Action":"output","Output":"--- FAIL: TestX (0.00s)\\n"}', {"p::TestX": "failed"}, None),
        ("50% tests passed, 1 tests failed out of 2", {"a": "passed", "b": "passed"}, "1 failed"),
        ("100% tests passed, 0 tests failed out of 2", {"a": "passed", "b": "passed"}, None),
        ("no summary here", {"a": "passed"}, None),
    ],
)
def test_a_report_is_checked_against_the_runners_summary_line(
    log: str, tests: dict[str, str], verdict: str | None
) -> None:
    outcomes = {k: TestOutcome(v) for k, v in tests.items()}
    reason = contradiction(runner_summary([(log, False)]), outcomes)
    if verdict is None:
        assert reason is None
    else:
        assert reason is not None and reason.startswith("report contradicts the test runner")
        assert verdict in reason


def _peak_mib(work: Callable[[], object]) -> float:
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def test_a_deeply_nested_report_is_refused_while_it_streams() -> None:
    """66 MB of nesting cost 2.85 GB when parsed whole; read as a stream it stops at the limit."""
    data = b"<testsuites>" + b"<testsuite>" * 5_000_000
    with pytest.raises(ReportError, match="nests deeper"):
        parse_report(ReportFormat.JUNIT, data)
    assert _peak_mib(lambda: _refused(data)) < 50


def _refused(data: bytes) -> None:
    with pytest.raises(ReportError):
        parse_report(ReportFormat.JUNIT, data)


def test_a_report_naming_too_many_tests_is_refused_before_it_is_parsed() -> None:
    case = b'<testcase classname="c" name="t"/>'
    data = b"<testsuite>" + case * 1_500_000 + b"</testsuite>"
    started = time.monotonic()
    with pytest.raises(ReportError, match="1500000 tests, over the limit"):
        parse_report(ReportFormat.JUNIT, data, max_tests=100_000)
    assert time.monotonic() - started < 1.0


def test_a_report_whose_ids_add_up_past_what_a_run_keeps_is_refused() -> None:
    """100,000 tests with 600-byte names made one stored result 51.8 MB."""
    case = b'<testcase classname="c" name="%s%%06d"/>' % (b"n" * 600)
    data = b"<testsuite>" + b"".join(case % i for i in range(100_000)) + b"</testsuite>"
    with pytest.raises(ReportError, match=r"test ids add up to 47\.\d MiB, over the 16 MiB"):
        parse_report(ReportFormat.JUNIT, data)
    honest = b'<testcase classname="tests.test_module" name="test_case_%06d"/>'
    data = b"<testsuite>" + b"".join(honest % i for i in range(100_000)) + b"</testsuite>"
    assert len(parse_report(ReportFormat.JUNIT, data)) == 100_000


def test_a_large_report_is_read_in_memory_that_follows_a_case_not_the_file() -> None:
    case = b'<testcase classname="c" name="t%d"><system-out>%s</system-out></testcase>'
    data = (
        b"<testsuite>" + b"".join(case % (i, b"x" * 1200) for i in range(30_000)) + b"</testsuite>"
    )  # 36 MB; the outcomes kept grow with the cases, not with their output (measured 3.5 MiB)
    outcomes: dict[str, TestOutcome] = {}
    peak = _peak_mib(lambda: outcomes.update(parse_report(ReportFormat.JUNIT, data)))
    assert len(outcomes) == 30_000
    assert peak < 12, f"{len(data) / 2**20:.0f} MB report took {peak:.0f} MiB"


def test_an_overlong_test_id_is_stored_bounded_and_stays_one_stable_id() -> None:
    long_name = "t" * 2_000_000
    data = f'<testsuite><testcase classname="c" name="{long_name}"/></testsuite>'.encode()
    first = parse_report(ReportFormat.JUNIT, data)
    assert first == parse_report(ReportFormat.JUNIT, data)
    (test_id,) = first
    assert len(test_id) <= MAX_ID_CHARS
