"""Recording outcomes: ids cleaned of control characters; of a test seen twice, the worst stands."""

from ci_runner.text import clean_text
from ci_runner.types import TestOutcome

Outcomes = dict[str, TestOutcome]

_SEVERITY = {
    TestOutcome.SKIPPED: 0,
    TestOutcome.PASSED: 1,
    TestOutcome.FAILED: 2,
    TestOutcome.ERROR: 3,
}


def record(outcomes: Outcomes, test_id: str, outcome: TestOutcome) -> None:
    test_id = clean_text(test_id)
    known = outcomes.get(test_id)
    if known is None or _SEVERITY[outcome] > _SEVERITY[known]:
        outcomes[test_id] = outcome
