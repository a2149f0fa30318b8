"""Leaderboards as stored snapshots, with cost and latency beside each rating."""

from __future__ import annotations

import datetime as dt

from pydantic import BaseModel


class LeaderboardRow(BaseModel):
    model: str
    rating: float | None
    ci_low: float | None
    ci_high: float | None
    rank_ub: int | None
    matches: int | None
    wins: int | None
    losses: int | None
    ties: int | None
    elo: float | None
    cost: float | None  # USD over the scope's answers (tokens x price per million)
    latency: float | None  # mean seconds per answer


class Leaderboard(BaseModel):
    scope: str  # overall, language, role, kind
    scope_value: str
    tournament: int | None
    computed_at: dt.datetime | None  # null: no snapshot yet for this scope
    match_count: int
    rows: list[LeaderboardRow]


class Matrix(BaseModel):
    """win_fraction[i][j]: share of decisive i-vs-j matches i won (null: none decisive)."""

    models: list[str]
    win_fraction: list[list[float | None]]
    matches: list[list[int]]
