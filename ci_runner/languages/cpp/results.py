"""ctest's results: its JUnit or console report, its lines in a log, and its `N% tests passed`
summary line."""

from __future__ import annotations

import re

from ci_runner.languages.cpp.ctest import parse_ctest
from ci_runner.languages.outcomes import Outcomes
from ci_runner.languages.results import Counts, ResultRules, SummaryRule
from ci_runner.pipeline import ReportFormat

_CTEST = re.compile(r"\d{1,3}% tests passed, (\d{1,9}) tests? failed out of (\d{1,9})")


def ctest_summary(line: str) -> Counts | None:
    """`67% tests passed, 1 tests failed out of 3`."""
    found = _CTEST.fullmatch(line.strip())
    if found is None:
        return None
    failed, total = int(found[1]), int(found[2])
    return {"failed": failed, "passed": max(total - failed, 0)}


def _ctest_lines(lines: list[str]) -> Outcomes:
    """Its text lines only, never its JUnit mode."""
    return parse_ctest("\n".join(lines).encode().lstrip(b"<"))


RESULTS = ResultRules(
    reports={ReportFormat.CTEST: parse_ctest},
    console=(_ctest_lines,),
    summaries=(SummaryRule("ctest", ctest_summary),),
)
