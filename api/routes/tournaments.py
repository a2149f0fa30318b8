"""/api/tournaments: start one (round robin or adaptive), follow its progress (also as
server-sent events), add a model to an adaptive one, cancel it."""

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
    AdaptiveProgress,
    AdaptiveSettings,
    Budget,
    BudgetLeft,
    Cancelled,
    Goal,
    ModelAtFault,
    ModelJoin,
    ModelSpending,
    Progress,
    Spending,
    TournamentCreate,
    TournamentOut,
    TournamentPage,
    TournamentSettings,
)
from arena.faults import models_at_fault
from arena.queues import enqueue
from arena.ratings.adaptive_state import standing
from arena.store import tasks as task_store
from arena.store.adaptive import CannotAdd, NotAdaptive, add_model, load_book
from arena.store.evidence import get_tournament, list_tournaments
from arena.store.models import list_models
from arena.store.pool import Pool
from arena.store.tournaments import UnknownTournament, cancel_tournament, create_tournament
from arena.tasks.demo import demo_tasks
from arena.tasks.schema import Task
from arena.vocabulary import Queue, TaskName, TournamentStatus

router = APIRouter(prefix="/tournaments", tags=["tournaments"])
IdPath = Annotated[int, Path(ge=1, le=2**62, description="the tournament's id")]


def engine_budget(budget: Budget) -> dict[str, float]:
    """As the engine's `stopping.Budget` names it (stored so): CI hours in seconds."""
    engine = {
        "matches": budget.matches,
        "seconds": None if budget.ci_hours is None else budget.ci_hours * 3600,
        "tokens": budget.tokens,
        "money": budget.money_usd,
        "per_model_matches": budget.per_model_matches,
        "per_model_seconds": None
        if budget.per_model_ci_hours is None
        else budget.per_model_ci_hours * 3600,
        "per_model_tokens": budget.per_model_tokens,
        "per_model_money": budget.per_model_money_usd,
    }
    return {k: v for k, v in engine.items() if v is not None}


def _shown_budget(stored: dict[str, Any]) -> Budget:
    seconds, model_seconds = stored.get("seconds"), stored.get("per_model_seconds")
    return Budget(
        matches=stored.get("matches"),
        ci_hours=None if seconds is None else seconds / 3600,
        tokens=stored.get("tokens"),
        money_usd=stored.get("money"),
        per_model_matches=stored.get("per_model_matches"),
        per_model_ci_hours=None if model_seconds is None else model_seconds / 3600,
        per_model_tokens=stored.get("per_model_tokens"),
        per_model_money_usd=stored.get("per_model_money"),
    )


def _adaptive_progress(pool: Pool, row: DictRow) -> AdaptiveProgress | None:
    """The engine's own criterion, estimate and budget arithmetic over the stored books."""
    book = load_book(pool, row["id"]) if row["mode"] == "adaptive" else None
    if book is None:
        return None
    now = standing(book)
    stored = row["adaptive"]
    return AdaptiveProgress(
        goal=Goal.model_validate(stored.get("goal", {})),
        budget=_shown_budget(stored.get("budget", {})),
        in_flight=stored.get("in_flight", AdaptiveSettings().in_flight),
        spent=Spending(
            matches=now.used.matches,
            ci_seconds=now.used.seconds,
            tokens=now.used.tokens,
            money_usd=now.used.money,
        ),
        left=BudgetLeft(
            matches=now.left.get("matches"),
            ci_seconds=now.left.get("seconds"),
            tokens=now.left.get("tokens"),
            money_usd=now.left.get("money"),
        ),
        widest_open=now.widest,
        target_width=now.target,
        matches_to_finish=now.to_finish,
        stop_reason=row["stop_reason"],
        placing=list(row["newcomers"]),
    )


def tournament_out(pool: Pool, row: DictRow) -> TournamentOut:
    counts = row["counts"]
    return TournamentOut(
        id=row["id"],
        status=row["status"],
        mode=row["mode"],
        adaptive=_adaptive_progress(pool, row),
        models=list(row["models"]),
        tasks=row["tasks_spec"],
        settings=TournamentSettings.model_validate(row["settings"] or {}),
        progress=Progress(**counts, total=sum(counts.values())),
        models_at_fault=[
            ModelAtFault(model=m.model, matches=m.matches, last_reason=m.last_reason)
            for m in models_at_fault(row["endpoint_failures"])
        ],
        spending=[
            ModelSpending(
                model=m.model,
                matches=m.matches,
                ci_seconds=m.ci_seconds,
                tokens=m.tokens,
                money_usd=m.money_usd,
            )
            for m in row["spending"]
        ],
        created_at=row["created_at"],
        finished_at=row["finished_at"],
    )


def _models(s: ServicesDep, names: list[str]) -> dict[str, dict[str, Any]]:
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise ApiError(422, ["body", "models"], f"named twice: {', '.join(twice)}")
    return _models_at(s, names, ["body", "models"])


def _models_at(s: ServicesDep, names: list[str], loc: list[str | int]) -> dict[str, dict[str, Any]]:
    """Registered and not retired, or a 422 at `loc`."""
    known = {r.name: r for r in list_models(s.pool, include_retired=True)}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ApiError(422, loc, f"unknown model(s): {', '.join(unknown)} (POST /api/models)")
    retired = [n for n in names if known[n].retired_at is not None]
    if retired:
        raise ApiError(422, loc, f"retired model(s): {', '.join(retired)}")
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
    """A round robin records every match and round, then the workers play them; an adaptive
    tournament records its task pool, and the workers ask the pairing engine for a few
    matches at a time until its goal holds or its budget is spent. Follow /events."""
    if body.adaptive is not None and body.mode != "adaptive":
        raise ApiError(422, ["body", "adaptive"], 'only for mode "adaptive"')
    models = _models(s, body.models)
    tasks, spec = _tasks(s, body)
    adaptive = None
    if body.mode == "adaptive":
        chosen = body.adaptive or AdaptiveSettings()
        adaptive = {
            "goal": chosen.goal.model_dump(),
            "budget": engine_budget(chosen.budget),
            "in_flight": chosen.in_flight,
        }
    tournament_id = create_tournament(
        s.pool, models, tasks, spec, body.settings.model_dump(), adaptive
    )
    enqueue(s.queue, TaskName.SCHEDULE, (tournament_id,), Queue.CONTROL)
    return _get(s, tournament_id)


def _get(s: ServicesDep, tournament_id: int) -> TournamentOut:
    row = get_tournament(s.pool, tournament_id)
    if row is None:
        raise not_found(["path", "tournament_id"], f"no tournament {tournament_id}")
    return tournament_out(s.pool, row)


@router.get("", operation_id="list_tournaments", responses=error_responses(422))
def list_all(
    pool: PoolDep,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
) -> TournamentPage:
    rows, total = list_tournaments(pool, limit, offset)
    return TournamentPage(
        tournaments=[tournament_out(pool, r) for r in rows],
        total=total,
        limit=limit,
        offset=offset,
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


@router.post(
    "/{tournament_id}/models",
    operation_id="add_tournament_model",
    status_code=status.HTTP_202_ACCEPTED,
    dependencies=[Admin],
    responses=error_responses(401, 404, 409, 422),
)
def join(tournament_id: IdPath, body: ModelJoin, s: ServicesDep) -> TournamentOut:
    """Adds a model to an adaptive tournament (running or done): it runs again, playing only
    matches that place the newcomer among its neighbours, then stops as before."""
    spec = _models_at(s, [body.model], ["body", "model"])[body.model]
    budget = None if body.budget is None else engine_budget(body.budget)
    try:
        add_model(s.pool, tournament_id, body.model, spec, budget)
    except LookupError as exc:
        raise not_found(["path", "tournament_id"], str(exc)) from None
    except NotAdaptive as exc:
        raise ApiError(409, ["path", "tournament_id"], str(exc)) from None
    except CannotAdd as exc:
        raise ApiError(409, ["body", "model"], str(exc)) from None
    enqueue(s.queue, TaskName.SCHEDULE, (tournament_id,), Queue.CONTROL)
    return _get(s, tournament_id)


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
                if current.status != TournamentStatus.RUNNING and not current.progress.running:
                    yield ServerSentEvent(data=shown, event="end")
                    return
                current = await anext(updates)

    return slot.response(stream())
