"""Shapes every route shares: errors that name the field and the problem, pages."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

# Where a task's gold patch and tests (the answers models are judged against) can be read:
# `shown` (in this response), `admin_only` (with the admin token, on GET /api/tasks/{id}), or
# `after_match` (on this match's page once it has finished). Never while a match plays it.
GoldAccess = Literal["shown", "admin_only", "after_match"]
GOLD_ACCESS_HELP = (
    "where the gold patch and tests can be read: `shown` (here), `admin_only` (with the admin"
    " token, on GET /api/tasks/{instance_id}), `after_match` (here once the match has finished)"
)


class ErrorItem(BaseModel):
    loc: list[str | int]  # where: e.g. ["body", "models"], ["query", "limit"], ["file", "line 3"]
    msg: str  # the problem, in words a user can act on
    type: str


class ErrorBody(BaseModel):
    detail: list[ErrorItem]


def error_responses(*codes: int) -> dict[int | str, dict[str, object]]:
    described = {
        401: "missing or wrong admin token",
        404: "not found",
        409: "conflicts with what is stored",
        422: "bad input: each item names the field and the problem",
        429: "too many open streams (per client address or in total): retry after Retry-After"
        " seconds",
        503: "a service it needs is down",
    }
    return {code: {"model": ErrorBody, "description": described[code]} for code in codes}
