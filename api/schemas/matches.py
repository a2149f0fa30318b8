"""Matches: a row in a list, and the whole evidence of one."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, Field

from api.schemas.common import GOLD_ACCESS_HELP, GoldAccess
from arena.faults import FaultComponent
from arena.vocabulary import MatchStatus

# the list's filter: plain strings, so that a refused value's 422 names the values, not members
StatusFilter = Literal["queued", "running", "done", "failed", "skipped", "cancelled"]


class MatchSummary(BaseModel):
    id: int
    tournament_id: int
    task: str
    language: str
    kind: str
    a: str
    b: str
    status: Literal[
        MatchStatus.QUEUED,
        MatchStatus.RUNNING,
        MatchStatus.DONE,
        MatchStatus.FAILED,
        MatchStatus.SKIPPED,
        MatchStatus.CANCELLED,
    ]
    score: dict[str, int] | None
    result: str | None  # the winning model, or "tie"
    reason: str | None  # why it failed or was skipped
    fault: FaultComponent | None = Field(
        description="a failed match: what kept it from finishing (null: not known)"
    )
    at_fault: str | None = Field(
        description="with fault model_endpoint: the model whose endpoint failed the match"
    )
    created_at: dt.datetime
    finished_at: dt.datetime | None


class MatchPage(BaseModel):
    matches: list[MatchSummary]
    total: int
    limit: int
    offset: int


class AnswerEvidence(BaseModel):
    role: Literal["submitter", "reviewer"]
    model: str
    raw_text: str | None = Field(description="null while the match has not finished (withheld)")
    diff: str | None = Field(description="null: no diff, or withheld while the match plays")
    parse_error: str | None
    error: str | None
    latency_s: float
    prompt_tokens: int
    completion_tokens: int
    cost: float | None  # tokens x the model's price per million, when it has one


class RoundEvidence(BaseModel):
    idx: int
    submitter: str
    reviewer: str
    answers: list[AnswerEvidence]
    judged: bool
    winner: str | None  # the winning model, "draw", or null while unjudged
    winner_role: Literal["submitter", "reviewer", "draw"] | None
    facts: dict[str, bool]  # patch_applies, patch_correct, tests_valid, tests_catch
    reasons: dict[str, str]
    # each CI run: status, steps with logs (empty while the match has not finished), tests
    runs: dict[str, Any]
    finished_at: dt.datetime | None


class TaskEvidence(BaseModel):
    instance_id: str
    language: str
    kind: str
    repo: str
    base_commit: str
    problem_statement: str
    hints_text: str
    validation: dict[str, Any] | None
    patch: str | None = Field(description="the gold patch; null unless gold_access is `shown`")
    test_patch: str | None = Field(description="the gold tests; null unless gold_access is `shown`")
    gold_access: GoldAccess = Field(description=GOLD_ACCESS_HELP)


class MatchEvidence(MatchSummary):
    task_detail: TaskEvidence
    withheld: str | None = Field(
        description="what this page leaves out until the match has finished, and why (null:"
        " nothing): the answers' text and diffs, the CI logs and the gold patch and tests,"
        " which could hand a playing model the answer"
    )
    rounds: list[RoundEvidence]
    latency_s: float  # all answers
    prompt_tokens: int
    completion_tokens: int
    cost: float | None
