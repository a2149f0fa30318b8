"""Tournaments: who plays, on which tasks, with which settings; and their progress."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from api.schemas.tasks import Kind, Validity
from arena.languages import Language


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
        default=6000, ge=500, le=1_000_000, description="retrieved repository context per prompt"
    )


class TournamentCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    models: list[str] = Field(min_length=2, max_length=64, description="registered model names")
    tasks: Literal["demo"] | list[str] | TaskSelection = Field(
        default="demo", description='"demo", a list of instance ids, or a selection'
    )
    settings: TournamentSettings = Field(default_factory=TournamentSettings)


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


class TournamentOut(BaseModel):
    id: int
    status: Literal["running", "done", "cancelled"]
    models: list[str]
    tasks: str
    settings: TournamentSettings
    progress: Progress
    models_at_fault: list[ModelAtFault] = Field(description="most failed matches first")
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
