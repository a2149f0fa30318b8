"""Test results read from console output, for runners wrapped so that no report file appears:
every registered language's console readers (`ResultRules.console`: pytest's `-rA` short
summary, `go test -v`, cargo's libtest and nextest lines, ctest's console lines, `python -m
unittest -v`). Ids match the ones the report-file parsers give, so a run read either way
compares. Linear time: lines are capped at MAX_LINE characters and each is matched a bounded
number of times by anchored patterns.
"""

from __future__ import annotations

from ci_runner.languages import profiles
from ci_runner.languages.outcomes import Outcomes, record

MAX_LINE = 4096


def _lines(text: str) -> list[str]:
    return [line[:MAX_LINE].rstrip("\r") for line in text.splitlines()]


def parse_console(text: str) -> Outcomes:
    """Every test result any known runner printed in `text`."""
    lines = _lines(text)
    outcomes: Outcomes = {}
    for read in (read for profile in profiles() for read in profile.results.console):
        for test_id, outcome in read(lines).items():
            record(outcomes, test_id, outcome)
    return outcomes
