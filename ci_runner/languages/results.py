"""How a language's test results are read (`LanguageProfile.results`): report files in a
format of its own, its runners' lines in a step's log when no report file appears, and the
summary line its runner prints itself, which a report rewritten by the code under test
contradicts (`ci_runner.reports` joins every language's with JUnit, which they share)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ci_runner.languages.outcomes import Outcomes
from ci_runner.pipeline import ReportFormat

# what one summary line counts: {"failed": n, "passed": n}
Counts = dict[str, int]


@dataclass(frozen=True)
class SummaryRule:
    """A runner's own summary line (`read`: its counts, or None for another line)."""

    runner: str  # as the contradiction names it
    read: Callable[[str], Counts | None]
    passes_known: bool = True  # False: its lines count failures only (`go test`'s FAIL lines)


@dataclass(frozen=True)
class ResultRules:
    reports: Mapping[ReportFormat, Callable[[bytes], Outcomes]] = field(default_factory=dict)
    # its runners' result lines in a log (lines already cut to a bounded length)
    console: tuple[Callable[[list[str]], Outcomes], ...] = ()
    summaries: tuple[SummaryRule, ...] = ()
