"""/api/tournaments: start one, follow its progress (also as server-sent events), cancel it."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import aclosing
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request, status
from fastapi.concurrency import run_in_threadpool
from psycopg.rows import DictRow
from sse_starlette import EventSourceResponse, ServerSentEvent

from api.deps import Admin, PoolDep, ServicesDep
from api.errors import ApiError, not_found
from api.routes.tasks import selection_filter
from api.schemas.common import error_responses
from api.schemas.tournaments import (
    Cancelled,
    ModelAtFault,
    Progress,
    TournamentCreate,
    TournamentOut,
    TournamentPage,
    TournamentSettings,
)
from arena.faults import models_at_fault
from arena.queues import Queue, TaskName, enqueue
from arena.store import tasks as task_store
from arena.store.evidence import get_tournament, list_tournaments
from arena.store.models import list_models
from arena.store.tournaments import UnknownTournament, cancel_tournament, create_tournament
from arena.tasks.demo import demo_tasks
from arena.tasks.schema import Task

router = APIRouter(prefix="/tournaments", tags=["tournaments"])
IdPath = Annotated[int, Path(ge=1, le=2**62, description="the tournament's id")]


def tournament_out(row: DictRow) -> TournamentOut:
    counts = row["counts"]
    return TournamentOut(
        id=row["id"],
        status=row["status"],
        models=list(row["models"]),
        tasks=row["tasks_spec"],
        settings=TournamentSettings.model_validate(row["settings"] or {}),
        progress=Progress(**counts, total=sum(counts.values())),
        models_at_fault=[
            ModelAtFault(model=m.model, matches=m.matches, last_reason=m.last_reason)
            for m in models_at_fault(row["endpoint_failures"])
        ],
        created_at=row["created_at"],
        finished_at=row["finished_at"],
    )


def _models(s: ServicesDep, names: list[str]) -> dict[str, dict[str, Any]]:
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise ApiError(422, ["body", "models"], f"named twice: {', '.join(twice)}")
    known = {r.name: r for r in list_models(s.pool, include_retired=True)}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ApiError(
            422, ["body", "models"], f"unknown model(s): {', '.join(unknown)} (POST /api/models)"
        )
    retired = [n for n in names if known[n].retired_at is not None]
    if retired:
        raise ApiError(422, ["body", "models"], f"retired model(s): {', '.join(retired)}")
    return {n: dict(known[n].spec) for n in names}


def _tasks(s: ServicesDep, body: TournamentCreate) -> tuple[list[Task], str]:
    chosen = body.tasks
    if chosen == "demo":
        return demo_tasks(s.ci_settings.cache_dir / "demo-repos"), "demo"
    if isinstance(chosen, list):
        if not chosen:
            raise ApiError(422, ["body", "tasks"], "an empty list of tasks")
        found, missing = task_store.tasks_by_ids(s.pool, list(dict.fromkeys(chosen)))
        if missing:
            raise ApiError(
                422,
                ["body", "tasks"],
                f"unknown task(s): {', '.join(missing[:20])} (POST /api/tasks/import)",
            )
        return found, ",".join(chosen)
    found = task_store.tasks_matching(s.pool, selection_filter(chosen))
    if not found:
        raise ApiError(422, ["body", "tasks"], "no task in the library matches the selection")
    return found, json.dumps(chosen.model_dump(exclude_none=True), sort_keys=True)


@router.post(
    "",
    operation_id="create_tournament",
    status_code=status.HTTP_202_ACCEPTED,
    dependencies=[Admin],
    responses=error_responses(401, 422),
)
def create(body: TournamentCreate, s: ServicesDep) -> TournamentOut:
    """Records every match and round, then the workers play them; follow /events."""
    models = _models(s, body.models)
    tasks, spec = _tasks(s, body)
    tournament_id = create_tournament(s.pool, models, tasks, spec, body.settings.model_dump())
    enqueue(s.queue, TaskName.SCHEDULE, (tournament_id,), Queue.CONTROL)
    return _get(s, tournament_id)


def _get(s: ServicesDep, tournament_id: int) -> TournamentOut:
    row = get_tournament(s.pool, tournament_id)
    if row is None:
        raise not_found(["path", "tournament_id"], f"no tournament {tournament_id}")
    return tournament_out(row)


@router.get("", operation_id="list_tournaments", responses=error_responses(422))
def list_all(
    pool: PoolDep,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
) -> TournamentPage:
    rows, total = list_tournaments(pool, limit, offset)
    return TournamentPage(
        tournaments=[tournament_out(r) for r in rows], total=total, limit=limit, offset=offset
    )


@router.get("/{tournament_id}", operation_id="get_tournament", responses=error_responses(404, 422))
def get_one(tournament_id: IdPath, s: ServicesDep) -> TournamentOut:
    return _get(s, tournament_id)


@router.post(
    "/{tournament_id}/cancel",
    operation_id="cancel_tournament",
    dependencies=[Admin],
    responses=error_responses(401, 404, 422),
)
def cancel(tournament_id: IdPath, s: ServicesDep) -> Cancelled:
    """Every unfinished match is cancelled; steps already running complete."""
    try:
        count = cancel_tournament(s.pool, tournament_id)
    except UnknownTournament as exc:
        raise not_found(["path", "tournament_id"], str(exc)) from None
    return Cancelled(id=tournament_id, cancelled_matches=count)


@router.get(
    "/{tournament_id}/events",
    operation_id="tournament_events",
    response_class=EventSourceResponse,
    responses={
        200: {
            "description": "text/event-stream: `progress` events (a Tournament as JSON) on each"
            " change, then one `end` event; keep-alive comments meanwhile, and an `idle` event"
            " (then the end) after ARENA_STREAM_IDLE_S without a change",
            "content": {
                "text/event-stream": {"schema": {"$ref": "#/components/schemas/TournamentOut"}}
            },
        },
        **error_responses(404, 422, 429),
    },
)
async def events(
    tournament_id: IdPath,
    request: Request,
    s: ServicesDep,
    poll_s: Annotated[float, Query(ge=0.2, le=30, description="how often to look")] = 1.0,
) -> EventSourceResponse:
    """Live progress: an event whenever the counts change, and `end` once it is over.

    Streams are capped per client address and in total (429 with Retry-After beyond). The
    streams of one tournament share one look at it (at the shortest `poll_s` among them),
    which holds a database connection for its read only, never while the streams wait."""
    slot = s.streams.admit(request)  # before any read: a refused stream costs no query
    with slot.released_on_error():
        first = await run_in_threadpool(_get, s, tournament_id)

    async def stream() -> AsyncGenerator[ServerSentEvent, None]:
        current, last = first, ""
        # one loop looks for every stream of this tournament; a client gone cancels the wait
        updates = s.progress_polls.follow(tournament_id, partial(_get, s, tournament_id), poll_s)
        async with aclosing(updates):
            while True:
                shown = current.model_dump_json()
                if shown != last:
                    yield ServerSentEvent(data=shown, event="progress")
                    last = shown
                if current.status != "running" and not current.progress.running:
                    yield ServerSentEvent(data=shown, event="end")
                    return
                current = await anext(updates)

    return slot.response(stream())
