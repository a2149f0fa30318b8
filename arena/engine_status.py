"""Whether the Docker engine this process would run sandboxes on answers, in one line."""

from __future__ import annotations

from typing import Any

import docker

from ci_runner.engine import ENGINE_ERRORS


def engine_check() -> dict[str, Any]:
    """Ping the engine this process would run sandboxes on."""
    try:
        docker.from_env(timeout=3).ping()
    except ENGINE_ERRORS as exc:
        return {"ok": False, "reason": f"no Docker engine answers: {type(exc).__name__}: {exc}"}
    return {"ok": True, "reason": None}
