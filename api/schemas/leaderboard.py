"""Leaderboards as stored snapshots, with rates, cost, latency and metadata beside each rating."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel


class LeaderboardRow(BaseModel):
    model: str
    rating: float | None  # Bradley-Terry over matches; with a role: that role's rating
    ci_low: float | None  # 95% task-bootstrap interval (null for a role's rating)
    ci_high: float | None
    rank_ub: int | None  # 1 + models surely better (null for a role's rating)
    matches: int | None
    wins: int | None
    losses: int | None
    ties: int | None
    elo: float | None
    submitter: float | None  # its rating as submitter (rounds: submitter vs reviewer)
    reviewer: float | None  # its rating as reviewer, on the same scale
    patch_correct: float | None  # share of its submitter rounds whose patch was correct
    tests_valid: float | None  # share of its reviewer rounds whose tests were valid
    catch: float | None  # share of the wrong patches it reviewed that its tests caught
    rounds_submitted: int  # the rates' denominators
    rounds_reviewed: int
    wrong_patches_reviewed: int
    cost: float | None  # USD over the board's answers (tokens x price per million)
    latency: float | None  # mean seconds per answer
    organization: str | None
    license: str | None
    knowledge_cutoff: dt.date | None


class Leaderboard(BaseModel):
    """One stored board: the filters it answers, when it was computed and over how many
    matches. `window` is `cutoff` (tasks opened after each model's knowledge cutoff), a day
    (tasks opened after it) or null (all tasks)."""

    language: str | None
    kind: str | None
    role: Literal["submitter", "reviewer"] | None
    window: str | None
    tournament: int | None
    computed_at: dt.datetime | None  # null: not computed yet (a worker was asked)
    current: bool  # false: a newer board was asked of a worker; this one is the last stored
    match_count: int
    rows: list[LeaderboardRow]


class Matrix(BaseModel):
    """win_fraction[i][j]: share of decisive i-vs-j matches i won (null: none decisive)."""

    models: list[str]
    win_fraction: list[list[float | None]]
    matches: list[list[int]]
