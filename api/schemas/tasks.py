"""Tasks as the API shows them, and what an import reports line by line."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel

Validity = Literal["valid", "invalid", "unvalidated"]
Kind = Literal["gold-judged", "ci-judged"]


class TaskSummary(BaseModel):
    instance_id: str
    language: str
    kind: str
    repo: str
    base_commit: str
    issue_created_at: str | None
    validity: Validity
    validation_reason: str | None
    # test counts as validation found them (null until validated): FAIL_TO_PASS, PASS_TO_PASS,
    # and those left out (flaky between two runs; broken: failing with and without the fix)
    fail_to_pass: int | None
    pass_to_pass: int | None
    flaky: int | None
    broken: int | None
    imported_at: dt.datetime


class TaskDetail(TaskSummary):
    problem_statement: str
    hints_text: str
    patch: str
    test_patch: str
    fingerprint: str
    pipeline: dict[str, Any] | None
    validation: dict[str, Any] | None
    validated_at: dt.datetime | None


class TaskPage(BaseModel):
    tasks: list[TaskSummary]
    total: int
    limit: int
    offset: int


class ImportedTask(BaseModel):
    instance_id: str
    new: bool  # False: the same task (same fingerprint) was stored before


class LineProblem(BaseModel):
    line: int
    field: str
    problem: str


class ImportReport(BaseModel):
    imported: list[ImportedTask]
    errors: list[LineProblem]


class ValidationQueued(BaseModel):
    instance_id: str
    status: Literal["queued", "done"]
    validity: Validity
