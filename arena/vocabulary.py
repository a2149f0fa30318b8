"""The names the store, the API, the workers and the command line share, in one place.

A tournament's and a match's statuses (as the store's CHECK constraints name them), the
queues and the Celery task names both sides of the service use, the kinds of model, and
the two roles of a round.
A plain string for any of them must not cross a package boundary: each side names them
from here. Only `enum` is imported, so importing this costs nothing.
"""

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

# retrieved repository context per prompt, unless a tournament's settings say otherwise
CONTEXT_BUDGET_TOKENS = 6000


class Queue(StrEnum):
    CONTROL = "control"  # schedule, finish a match, ratings
    LLM = "llm"  # one model call
    CI = "ci"  # one sandbox run (validation, a round's runs)


QUEUES: tuple[Queue, ...] = tuple(Queue)


class TaskName(StrEnum):
    """The Celery tasks the workers register: `arena.<step>`."""

    PREPARE = "arena.prepare"
    ANSWER = "arena.answer"
    ROUND = "arena.round"
    FINISH = "arena.finish"
    RATINGS = "arena.ratings"
    WINDOW_RATINGS = "arena.window_ratings"
    SCHEDULE = "arena.schedule"


# the remote-control command each CI worker answers with whether its Docker engine answers
ENGINE_COMMAND = "engine"


class ModelKind(StrEnum):
    """What plays under a model's name: an OpenAI-compatible endpoint, recorded answers, or
    one of the baselines (stored as a spec of its kind only)."""

    OPENAI = "openai"
    REPLAY = "replay"
    BASELINE = "baseline"


# which side of a round a model plays (swing-protocol.md; no docstring: the API's schema
# shows the enum as it is)
class Role(StrEnum):
    SUBMITTER = "submitter"
    REVIEWER = "reviewer"
