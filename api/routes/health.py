"""/api/health: PostgreSQL, Redis, the Docker engine and the workers seen on each queue."""

from __future__ import annotations

from typing import Any

import redis
from fastapi import APIRouter, Response

from api.deps import ServicesDep
from api.schemas.health import Check, Health, QueueCheck
from arena.engine_status import engine_check
from arena.store.pool import ping
from arena.vocabulary import ENGINE_COMMAND, QUEUES

router = APIRouter(tags=["health"])


def _postgres(s: ServicesDep) -> Check:
    try:
        ping(s.pool, timeout_s=2)
    except Exception as exc:
        return Check(ok=False, reason=f"PostgreSQL does not answer: {type(exc).__name__}")
    return Check(ok=True)


def _redis(s: ServicesDep) -> Check:
    try:
        redis.Redis.from_url(
            s.settings.broker_url, socket_timeout=2, socket_connect_timeout=2
        ).ping()
    except redis.RedisError as exc:
        return Check(ok=False, reason=f"Redis (the broker) does not answer: {exc}")
    return Check(ok=True)


def _docker(s: ServicesDep, broker_up: bool) -> Check:
    """The engines of the CI workers, as they report them; this host's engine when none answers."""
    replies: list[dict[str, Any]] = []
    if broker_up:
        try:
            replies = s.queue.control.broadcast(ENGINE_COMMAND, reply=True, timeout=1.0) or []
        except Exception:  # the broker went away since it was checked
            replies = []
    reports = {w: r for reply in replies for w, r in reply.items() if isinstance(r, dict)}
    if not reports:
        local = engine_check(s.ci_settings)
        return Check(ok=local["ok"], reason=local["reason"])
    down = {w: r["reason"] for w, r in sorted(reports.items()) if not r.get("ok")}
    if len(down) == len(reports):
        return Check(ok=False, reason="; ".join(f"{w}: {why}" for w, why in down.items()))
    return Check(ok=True)


def _queues(s: ServicesDep, broker_up: bool) -> dict[str, QueueCheck]:
    seen: dict[str, list[str]] = {q.value: [] for q in QUEUES}
    if broker_up:
        try:
            replies = s.queue.control.inspect(timeout=1.0).active_queues() or {}
        except Exception:  # the broker went away between the ping and now
            replies = {}
        for worker, queues in replies.items():
            for queue in queues:
                if queue.get("name") in seen:
                    seen[queue["name"]].append(worker)
    return {
        q: QueueCheck(
            ok=bool(workers),
            workers=sorted(workers),
            reason=None if workers else ("the broker is down" if not broker_up else "no worker"),
        )
        for q, workers in seen.items()
    }


@router.get(
    "/health",
    operation_id="get_health",
    responses={503: {"model": Health, "description": "the service cannot do its job"}},
)
def health(s: ServicesDep, response: Response) -> Health:
    """503 when PostgreSQL or Redis is down or a queue has no worker."""
    postgres, broker = _postgres(s), _redis(s)
    engine = _docker(s, broker.ok)
    queues = _queues(s, broker.ok)
    working = postgres.ok and broker.ok and all(q.ok for q in queues.values())
    found = Health(
        status="ok" if working and engine.ok else ("degraded" if working else "down"),
        postgres=postgres,
        redis=broker,
        docker=engine,
        queues=queues,
    )
    if not working:
        response.status_code = 503
    return found
