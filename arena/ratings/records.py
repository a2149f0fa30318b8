"""Typed match records: what every driver (a results file, PostgreSQL) hands the board maths.

The command line reads them from JSONL, the workers from the store; both then call the same
pure functions on them, so the same results give the same numbers wherever they are shown.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

MatchWinner = Literal["a", "b", "tie"]
RoundWinner = Literal["submitter", "reviewer", "draw"]
MATCH_WINNERS: tuple[MatchWinner, ...] = ("a", "b", "tie")
ROUND_WINNERS: tuple[RoundWinner, ...] = ("submitter", "reviewer", "draw")


@dataclass(frozen=True)
class RoundResult:
    """One round: a submitter against a reviewer, with the facts of the protocol."""

    task: str
    submitter: str
    reviewer: str
    winner: str  # "submitter", "reviewer" or "draw"
    patch_applies: bool = False
    patch_correct: bool = False
    tests_valid: bool = False
    tests_catch: bool = False
    language: str | None = None
    kind: str | None = None


@dataclass(frozen=True)
class AnswerUsage:
    """What one stored answer cost: its tokens and how long the model took."""

    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float


@dataclass(frozen=True)
class MatchResult:
    """One finished match: who played whom on which task, who won, and its rounds.

    `finished_at` and `match_id` order the matches wherever order matters (Elo); a results
    file written as matches finished may leave them out and is then taken in its own order.
    `opened` (the task's issue date, ISO) and `answers` are known to the service only."""

    task: str
    a: str
    b: str
    winner: MatchWinner
    language: str | None = None
    kind: str | None = None
    rounds: tuple[RoundResult, ...] = ()
    finished_at: dt.datetime | None = None
    match_id: int | None = None
    opened: str | None = None
    answers: tuple[AnswerUsage, ...] = ()
    ci_seconds: float | None = None  # its CI runs' time; None where not recorded
    rules_version: str | None = None  # the protocol's rules it was judged under; None: unknown
    unguarded: bool = False  # a round's run of a patch carried no tripwire that must fail

    def __post_init__(self) -> None:
        if self.a == self.b:
            raise ValueError(f"task {self.task}: a model cannot play itself ({self.a})")
        if self.winner not in MATCH_WINNERS:
            raise ValueError(f"task {self.task}: winner must be a, b or tie, not {self.winner!r}")


_EARLIEST = dt.datetime.min.replace(tzinfo=dt.UTC)


def _aware(moment: dt.datetime) -> dt.datetime:
    """A time without a zone is taken as UTC, so times from any source compare."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)


def finish_order(matches: Iterable[MatchResult]) -> list[MatchResult]:
    """The matches in the order they finished: finish time, then match id. Records without
    them keep the order given (stable), after those that have them."""
    return sorted(
        matches,
        key=lambda m: (
            m.finished_at is None,
            _EARLIEST if m.finished_at is None else _aware(m.finished_at),
            m.match_id is None,
            m.match_id or 0,
        ),
    )


def rounds_of(matches: Iterable[MatchResult]) -> list[RoundResult]:
    """Every round of these matches, match by match."""
    return [r for m in matches for r in m.rounds]
