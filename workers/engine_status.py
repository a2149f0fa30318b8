"""The `engine` remote-control command: each CI worker says whether its Docker engine answers.

The API asks the CI workers instead of pinging an engine itself: in a deployment only the CI
workers hold the engine (the host's socket, or their own DOCKER_HOST), and the API container must
not. A worker that consumes no `ci` queue answers nothing.
"""

from __future__ import annotations

from typing import Any

import docker
from celery.worker.control import inspect_command

from ci_runner.engine import ENGINE_ERRORS

ENGINE_COMMAND = "engine"


def engine_check() -> dict[str, Any]:
    """Ping the engine this process would run sandboxes on."""
    try:
        docker.from_env(timeout=3).ping()
    except ENGINE_ERRORS as exc:
        return {"ok": False, "reason": f"no Docker engine answers: {type(exc).__name__}: {exc}"}
    return {"ok": True, "reason": None}


@inspect_command(name=ENGINE_COMMAND)  # type: ignore[untyped-decorator]
def engine(state: Any) -> dict[str, Any] | None:
    queues = {q.name for q in state.consumer.task_consumer.queues}
    return engine_check() if "ci" in queues else None
