"""Leaderboards as stored snapshots, with rates, cost, latency and metadata beside each rating."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from api.schemas.tournaments import Goal
from arena.ratings.board import PROVISIONAL_MATCHES, BoardRow


class PerPoint(BaseModel):
    """Spending divided by the points a model's interval narrowed (BoardRow.narrowed): what
    one more point of certainty about its rating cost; null parts were not recorded."""

    tokens: float
    ci_seconds: float | None
    cost: float | None  # USD, at the model's current price


class LeaderboardRow(BoardRow):
    """A board's row as stored by the workers (every column computed by the engine), with
    what the service adds on read: cost at the model's current price, and its metadata."""

    cost: float | None  # USD over the board's answers (tokens x price per million)
    latency: float | None  # mean seconds per answer
    per_point: PerPoint | None = Field(
        description="what each point its interval narrowed cost; null while it has not narrowed"
    )
    organization: str | None
    license: str | None
    knowledge_cutoff: dt.date | None


class Leaderboard(BaseModel):
    """One stored board: the filters it answers, when it was computed and over how many
    matches. `window` is `cutoff` (tasks opened after each model's knowledge cutoff), a day
    (tasks opened after it) or null (all tasks)."""

    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    language: str | None
    kind: str | None
    role: Literal["submitter", "reviewer"] | None
    window: str | None
    tournament: int | None
    computed_at: dt.datetime | None  # null: not computed yet (a worker was asked)
    current: bool  # false: a newer board was asked of a worker; this one is the last stored
    match_count: int
    provisional_below: int = Field(
        default=PROVISIONAL_MATCHES,
        description="a row with fewer matches than this is marked provisional",
    )
    goal: Goal | None = Field(
        default=None,
        description="an adaptive tournament's goal: its board marks a row provisional until"
        " the goal holds for the row's neighbours (null: any other board)",
    )
    rows: list[LeaderboardRow]


class Matrix(BaseModel):
    """win_fraction[i][j]: share of decisive i-vs-j matches i won (null: none decisive)."""

    models: list[str]
    win_fraction: list[list[float | None]]
    matches: list[list[int]]
