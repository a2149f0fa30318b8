"""Maven Surefire's results: its JUnit files (one per test class, read through the report
pattern), and its own count of a module's tests, which a report rewritten by the code under
test contradicts: `[INFO] Tests run: 5, Failures: 1, Errors: 0, Skipped: 0` (the module's
total, after its per-class lines, which carry `Time elapsed` and are left out)."""

from __future__ import annotations

import re

from ci_runner.languages.results import Counts, ResultRules, SummaryRule

_TOTAL = re.compile(
    r"^(?:\[(?:INFO|WARNING|ERROR)\] )?Tests run: (\d{1,9}), Failures: (\d{1,9}), "
    r"Errors: (\d{1,9}), Skipped: (\d{1,9})$"
)


def surefire_summary(line: str) -> Counts | None:
    """A module's total line (ANSI colours left out)."""
    found = _TOTAL.match(re.sub(r"\x1b\[[0-9;]*m", "", line).strip())
    if found is None:
        return None
    ran, failures, errors, skipped = (int(found[i]) for i in range(1, 5))
    failed = failures + errors
    return {"failed": failed, "passed": max(ran - failed - skipped, 0)}


RESULTS = ResultRules(summaries=(SummaryRule("maven surefire", surefire_summary),))
