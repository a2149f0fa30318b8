"""Tournaments: who plays, on which tasks, with which settings; and their progress."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from api.schemas.tasks import Kind, Validity
from arena.languages import Language
from arena.vocabulary import CONTEXT_BUDGET_TOKENS, TournamentStatus


class TaskSelection(BaseModel):
    """Every library task (newest version) that matches all the given fields."""

    # the language as its name, as the store's filter takes it
    model_config = ConfigDict(extra="forbid", use_enum_values=True)

    language: Language | None = None  # the registered languages (arena.languages)
    kind: Kind | None = None
    validity: Validity | None = None
    repo: str | None = Field(default=None, max_length=500, description="substring of the repo")


class TournamentSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    context_budget_tokens: int = Field(
        default=CONTEXT_BUDGET_TOKENS,
        ge=500,
        le=1_000_000,
        description="retrieved repository context per prompt",
    )


class Goal(BaseModel):
    """When an adaptive tournament has ranked enough: every two neighbours on the board have
    95% intervals apart (`separate`), or both at most `target_width` points wide."""

    model_config = ConfigDict(extra="forbid")

    target_width: float | None = Field(
        default=None, gt=0, le=4000, description="points; null: no width target"
    )
    separate: bool = Field(default=True, description="neighbours whose intervals are apart")

    @model_validator(mode="after")
    def _some_goal(self) -> Goal:
        if self.target_width is None and not self.separate:
            raise ValueError("a goal needs separate: true, a target_width, or both")
        return self


class Budget(BaseModel):
    """Caps, each checked before a match is scheduled: a cap is passed by no more than what
    the matches already in flight spend (a match count never). Null: no cap."""

    model_config = ConfigDict(extra="forbid")

    matches: int | None = Field(default=None, ge=1, le=1_000_000)
    ci_hours: float | None = Field(
        default=None, gt=0, le=100_000, description="summed time of the matches' CI runs"
    )
    tokens: int | None = Field(
        default=None, ge=1, le=10**13, description="prompt + completion tokens of every answer"
    )
    money_usd: float | None = Field(
        default=None,
        gt=0,
        le=10**7,
        description="tokens at the models' registered prices (a model without prices: free)",
    )
    per_model_matches: int | None = Field(default=None, ge=1, le=1_000_000)
    per_model_ci_hours: float | None = Field(
        default=None, gt=0, le=100_000, description="CI time of the matches a model plays"
    )
    per_model_tokens: int | None = Field(
        default=None, ge=1, le=10**13, description="a model's own answers' tokens"
    )
    per_model_money_usd: float | None = Field(
        default=None, gt=0, le=10**7, description="a model's own tokens at its prices"
    )


class AdaptiveSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    goal: Goal = Field(default_factory=Goal)
    budget: Budget = Field(default_factory=Budget)
    in_flight: int = Field(
        default=4, ge=1, le=64, description="matches played at once (about the CI concurrency)"
    )


class TournamentCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    models: list[str] = Field(min_length=2, max_length=64, description="registered model names")
    tasks: Literal["demo"] | list[str] | TaskSelection = Field(
        default="demo", description='"demo", a list of instance ids, or a selection'
    )
    settings: TournamentSettings = Field(default_factory=TournamentSettings)
    mode: Literal["round_robin", "adaptive"] = Field(
        default="round_robin",
        description="round_robin: every pair on every task; adaptive: the pairing engine"
        " chooses each next match until the goal holds or the budget is spent",
    )
    adaptive: AdaptiveSettings | None = Field(
        default=None, description="goal, budget and concurrency of an adaptive tournament"
    )


class ModelJoin(BaseModel):
    """A model added to an adaptive tournament: only its own matches are played, until it is
    placed among its neighbours. A tournament that stopped on its budget needs a new one."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(min_length=1, max_length=200, description="a registered model name")
    budget: Budget | None = Field(default=None, description="replaces the tournament's budget")


class Progress(BaseModel):
    queued: int
    running: int
    done: int
    failed: int
    skipped: int
    cancelled: int
    total: int


class ModelAtFault(BaseModel):
    """A model whose endpoint failed matches: reported loudly, never ranked as if it had
    answered nothing (as `arena tournament` does)."""

    model: str
    matches: int = Field(description="how many of the tournament's matches its endpoint failed")
    last_reason: str = Field(description="why the latest of them failed")


class ModelSpending(BaseModel):
    """One model's part of a tournament: its matches ended (done or failed), their CI time
    (a match's runs judge both its models: they count for both), its own answers' tokens and
    their cost at its registered prices (null: none registered)."""

    model: str
    matches: int
    ci_seconds: float
    tokens: int
    money_usd: float | None


class Spending(BaseModel):
    matches: int = Field(description="matches ended (done or failed)")
    ci_seconds: float
    tokens: int
    money_usd: float = Field(description="at the models' registered prices")


class BudgetLeft(BaseModel):
    """What is left of each cap (null: not capped); matches count those in flight."""

    matches: float | None
    ci_seconds: float | None
    tokens: float | None
    money_usd: float | None


class AdaptiveProgress(BaseModel):
    goal: Goal
    budget: Budget
    in_flight: int
    spent: Spending
    left: BudgetLeft
    widest_open: float | None = Field(
        description="the stopping criterion: the widest 95% interval among neighbours not yet"
        " resolved, in points; null: the goal holds"
    )
    target_width: float | None
    matches_to_finish: int = Field(description="a rough estimate of the matches still needed")
    stop_reason: Literal["goal", "budget", "no matches left"] | None
    placing: list[str] = Field(description="models added later, still being placed")


class TournamentOut(BaseModel):
    id: int
    status: Literal[TournamentStatus.RUNNING, TournamentStatus.DONE, TournamentStatus.CANCELLED]
    mode: Literal["round_robin", "adaptive"]
    adaptive: AdaptiveProgress | None
    models: list[str]
    tasks: str
    settings: TournamentSettings
    progress: Progress
    models_at_fault: list[ModelAtFault] = Field(description="most failed matches first")
    spending: list[ModelSpending] = Field(description="per model that played, by name")
    created_at: dt.datetime
    finished_at: dt.datetime | None


class TournamentPage(BaseModel):
    tournaments: list[TournamentOut]
    total: int
    limit: int
    offset: int


class Cancelled(BaseModel):
    id: int
    cancelled_matches: int
