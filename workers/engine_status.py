"""The `engine` remote-control command: each CI worker says whether its Docker engine answers.

The API asks the CI workers instead of pinging an engine itself: in a deployment only the CI
workers hold the engine (the host's socket, or their own DOCKER_HOST), and the API container must
not. A worker that consumes no `ci` queue answers nothing.
"""

from __future__ import annotations

import functools
from typing import Any

from celery.worker.control import inspect_command

from arena.engine_status import engine_check
from arena.vocabulary import ENGINE_COMMAND, Queue
from ci_runner.config import CISettings

__all__ = ["engine", "engine_check"]


@functools.cache
def _ci_settings() -> CISettings:
    """Read once per process, as the steps' own are (workers.services): not from the steps'
    Services, whose PostgreSQL pool would make this answer wait on the database."""
    return CISettings()


@inspect_command(name=ENGINE_COMMAND)  # type: ignore[untyped-decorator]
def engine(state: Any) -> dict[str, Any] | None:
    queues = {q.name for q in state.consumer.task_consumer.queues}
    return engine_check(_ci_settings()) if Queue.CI.value in queues else None
