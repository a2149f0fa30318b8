"""The states a tournament and a match move through, as the store's CHECK constraints name them."""

from __future__ import annotations

from enum import StrEnum


class TournamentStatus(StrEnum):
    RUNNING = "running"
    DONE = "done"
    CANCELLED = "cancelled"


class MatchStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    SKIPPED = "skipped"
    CANCELLED = "cancelled"


# a match still to be played: the workers move it on, a cancel stops it
OPEN_MATCH = (MatchStatus.QUEUED, MatchStatus.RUNNING)
