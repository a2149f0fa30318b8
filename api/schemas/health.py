"""What the service depends on, each with a reason when it is down."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class Check(BaseModel):
    ok: bool
    reason: str | None = None


class QueueCheck(Check):
    workers: list[str]


class Health(BaseModel):
    status: Literal["ok", "degraded", "down"]
    postgres: Check
    redis: Check
    docker: Check
    queues: dict[str, QueueCheck]  # control, llm, ci
