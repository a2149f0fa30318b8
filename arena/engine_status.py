"""Whether the engine this process would run sandboxes on answers, in one line."""

from __future__ import annotations

from typing import Any

from ci_runner import CISettings, provider_for

PROBE_TIMEOUT_S = 3  # a health check waits this long for the engine, no longer


def engine_check(settings: CISettings) -> dict[str, Any]:
    """Probe the engine of the provider `settings` name (Docker unless ARENA_SANDBOX_PROVIDER
    says otherwise)."""
    why = provider_for(settings).unreachable(PROBE_TIMEOUT_S)
    return {"ok": why is None, "reason": why}
