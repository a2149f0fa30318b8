"""Rust's libtest text output (`cargo test`), one id per test binary and test.

Doctest names carry the line of their code block (`src/lib.rs - double (line 14)`); the id
drops it (`doc:crate::src/lib.rs - double`), so that a fix of a different length, which moves
the block, still names the same test. An item's several doctests share that id (the worst
outcome stands), as they document one item.

Parsed with string operations on bounded lines (one anchored-literal pattern for the line
number), so no input can make it backtrack.
"""

import re

from ci_runner.languages.outcomes import Outcomes, record
from ci_runner.languages.report_lines import report_lines
from ci_runner.types import TestOutcome

_DOCTEST_LINE = re.compile(r" \(line \d+\)")
_VERDICT = {"ok": TestOutcome.PASSED, "FAILED": TestOutcome.FAILED, "ignored": TestOutcome.SKIPPED}


def _after(line: str, keyword: str) -> str | None:
    """The first word after `keyword` opening the (left-stripped) line, if it does."""
    words = line.split(maxsplit=2)
    if not words or words[0] != keyword:
        return None
    if keyword == "Running" and len(words) > 2 and words[1] == "unittests":
        return words[2].split(maxsplit=1)[0]
    return words[1] if len(words) > 1 else None


def parse_libtest(data: bytes) -> Outcomes:
    outcomes: Outcomes = {}
    prefix = ""
    for line in report_lines(data):
        if (source := _after(line, "Running")) is not None:
            prefix = source
        elif (crate := _after(line, "Doc-tests")) is not None:
            prefix = f"doc:{crate}"
        elif line.startswith("test "):
            name, separator, rest = line[5:].rpartition(" ... ")
            verdict = rest.split(maxsplit=1)[0] if rest.strip() else ""
            name = _DOCTEST_LINE.sub("", name.strip())  # only doctest names hold spaces
            if separator and name and verdict in _VERDICT:
                record(outcomes, f"{prefix}::{name}" if prefix else name, _VERDICT[verdict])
    return outcomes
