"""Test report parsers: each turns one report format into `{test_id: outcome}`."""

from collections.abc import Callable

from ci_runner.errors import ReportError
from ci_runner.languages import profiles
from ci_runner.languages.junit import parse_junit
from ci_runner.languages.outcomes import Outcomes
from ci_runner.pipeline import ReportFormat
from ci_runner.reports.summaries import RunnerSummary, contradiction, runner_summary

# what one run's test ids may add up to: a result is stored and read back with every verdict
# (100,000 ids of 600 bytes made one result 51.8 MB); an honest suite of 100,000 tests with
# ids of 80 bytes stays well below it
MAX_ID_BYTES = 16 * 2**20


def _parser(report_format: ReportFormat) -> Callable[[bytes], Outcomes]:
    """JUnit, which the languages share, or the language's whose format it is."""
    if report_format is ReportFormat.JUNIT:
        return parse_junit
    for profile in profiles():
        if (parse := profile.results.reports.get(report_format)) is not None:
            return parse
    raise ReportError(f"no registered language reads {report_format.value} reports")


def parse_report(report_format: ReportFormat, data: bytes, max_tests: int = 100_000) -> Outcomes:
    """Parse a report; an empty, unreadable or oversized one is a ReportError, never a pass."""
    if not data.strip():
        raise ReportError(f"the {report_format.value} report is empty")
    named = data.count(b"<testcase")  # XML reports: refused by their size before parsing
    if named > max_tests:
        raise ReportError(
            f"the {report_format.value} report names {named} tests, over the limit of {max_tests}"
        )
    outcomes = _parser(report_format)(data)
    if not outcomes:
        raise ReportError(f"the {report_format.value} report names no tests")
    if len(outcomes) > max_tests:
        raise ReportError(
            f"the {report_format.value} report names {len(outcomes)} tests, over the limit of "
            f"{max_tests}"
        )
    named_bytes = sum(len(test_id.encode()) for test_id in outcomes)
    if named_bytes > MAX_ID_BYTES:
        raise ReportError(
            f"the {report_format.value} report's test ids add up to {named_bytes / 2**20:.1f} "
            f"MiB, over the {MAX_ID_BYTES // 2**20} MiB a run keeps"
        )
    return outcomes


__all__ = ["Outcomes", "RunnerSummary", "contradiction", "parse_report", "runner_summary"]
