"""Recording outcomes: ids cleaned of control characters; of a test seen twice, the worst stands."""

import hashlib

from ci_runner.text import clean_text
from ci_runner.types import TestOutcome

Outcomes = dict[str, TestOutcome]

_SEVERITY = {
    TestOutcome.SKIPPED: 0,
    TestOutcome.PASSED: 1,
    TestOutcome.FAILED: 2,
    TestOutcome.ERROR: 3,
}


# an id longer than any real one is kept as its head and a digest of the whole: still one id
# per test, stable between runs, and a report cannot make a stored result cost more than
# MAX_ID_CHARS per test
MAX_ID_CHARS = 500


def bounded_id(test_id: str) -> str:
    test_id = clean_text(test_id)
    if len(test_id) <= MAX_ID_CHARS:
        return test_id
    digest = hashlib.sha256(test_id.encode("utf-8", "replace")).hexdigest()[:16]
    return f"{test_id[: MAX_ID_CHARS - 20]}...#{digest}"


def record(outcomes: Outcomes, test_id: str, outcome: TestOutcome) -> None:
    test_id = bounded_id(test_id)
    known = outcomes.get(test_id)
    if known is None or _SEVERITY[outcome] > _SEVERITY[known]:
        outcomes[test_id] = outcome
