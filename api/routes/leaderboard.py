"""/api/leaderboard (stored snapshots, never fitted on read), its matrices, every result."""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response, StreamingResponse
from psycopg.rows import DictRow

from api.deps import PoolDep, Services, ServicesDep
from api.errors import ApiError
from api.schemas.common import error_responses
from api.schemas.leaderboard import Leaderboard, LeaderboardRow, Matrix, PerPoint
from api.schemas.tasks import Kind
from api.schemas.tournaments import Goal
from arena.queues import enqueue
from arena.ratings.adaptive_state import unplaced
from arena.ratings.board import PROVISIONAL_MATCHES, BoardRow
from arena.ratings.matrices import head_to_head
from arena.ratings.scopes import CUTOFF, after_window, cutoff_window
from arena.ratings.stopping import Goal as EngineGoal
from arena.ratings.stopping import Interval
from arena.ratings.usage import Usage
from arena.store.adaptive import adaptive_goal
from arena.store.snapshots import (
    BOARD,
    StoredBoard,
    board_key,
    latest_snapshot,
    latest_snapshot_like,
)
from arena.store.standings import dates_of, iter_results, model_meta, pair_tallies
from arena.tasks.schema import Language
from arena.vocabulary import MatchStatus, Queue, TaskName

router = APIRouter(tags=["leaderboard"])
TournamentQuery = Annotated[int | None, Query(ge=1, le=2**62, description="one tournament")]


@dataclass(frozen=True)
class _Found:
    """The board served, and whether it is the one the filters ask for now."""

    snapshot: StoredBoard | None
    rows: tuple[BoardRow, ...]
    current: bool


def _board(
    s: Services, tournament: int | None, language: str | None, kind: str | None
) -> Callable[[str | None], StoredBoard | None]:
    def find(window: str | None) -> StoredBoard | None:
        return latest_snapshot(s.pool, tournament, BOARD, board_key(language, kind, window))

    return find


def _stored(
    s: Services, tournament: int | None, language: str | None, kind: str | None,
    window: str | None,
) -> _Found:  # fmt: skip
    """The board of these filters; a combination without matches is an empty board as of its
    window's board over every language and kind (computed together)."""
    snapshot = _board(s, tournament, language, kind)(window)
    if snapshot is not None:
        return _Found(snapshot, snapshot.rows, True)
    whole = _board(s, tournament, None, None)(window)
    return _Found(whole, (), True)  # none at all (nothing rated yet) is current too


def _windowed(
    s: Services, tournament: int | None, language: str | None, kind: str | None,
    window: str, ask: str,
) -> _Found:  # fmt: skip
    """A window's board; when there is none yet (or new results or cutoffs came in since)
    a worker is asked for it, once per overall board, and the last stored one is shown (for
    the cutoff window, the one computed with the previous cutoffs)."""
    found = _stored(s, tournament, language, kind, window)
    overall = _board(s, tournament, None, None)(None)
    newest = None if overall is None else overall.computed_at
    fresh = found.snapshot is not None and (newest is None or found.snapshot.computed_at >= newest)
    if fresh:
        return found
    s.refresh_requests.get(
        (tournament, window, newest),
        lambda: enqueue(s.queue, TaskName.WINDOW_RATINGS, (tournament or 0, ask), Queue.CONTROL),
    )
    if found.snapshot is not None or ask != CUTOFF:
        return _Found(found.snapshot, found.rows, False)
    # the cutoffs changed since: the board computed with the previous ones, until then
    older = latest_snapshot_like(s.pool, tournament, BOARD, board_key(language, kind, CUTOFF))
    return _Found(older, () if older is None else older.rows, False)


@router.get(
    "/leaderboard",
    operation_id="get_leaderboard",
    response_model=Leaderboard,
    responses=error_responses(422),
)
async def get_leaderboard(
    s: ServicesDep,
    language: Language | None = None,
    role: Annotated[
        Literal["submitter", "reviewer"] | None,
        Query(description="rank by this role's rating (it fills `rating`; no interval)"),
    ] = None,
    kind: Kind | None = None,
    tournament: TournamentQuery = None,
    after_cutoff: Annotated[
        bool,
        Query(
            description="only matches on tasks whose issue was opened after the knowledge"
            " cutoff of both models (baselines have none; a model without a recorded cutoff"
            " is left out)"
        ),
    ] = False,
    created_after: Annotated[
        dt.date | None, Query(description="only tasks whose issue was opened after this day")
    ] = None,
) -> Response:
    """The latest stored board of these filters, combined (language AND kind AND tournament
    AND a task-date window, ranked by a role if given), with each model's role ratings, rates,
    cost, latency and metadata.

    Boards over all tasks and over the cutoff window are refreshed after matches finish; a
    `created_after` window, or a cutoff window after a model's cutoff changed, is computed by
    a worker on request (`current` is false until it is stored).

    Served as JSON built at most once per `ARENA_BOARD_TTL_S` per filter combination: a hit
    never leaves the event loop (no thread hop, no query, no validation)."""
    if after_cutoff and created_after is not None:
        raise ApiError(
            422, ["query", "created_after"], "give after_cutoff or created_after, not both"
        )
    lang = None if language is None else language.value
    key = (lang, role, kind, tournament, after_cutoff, created_after)

    def build() -> bytes:
        board = _leaderboard(s, lang, role, kind, tournament, after_cutoff, created_after)
        return board.model_dump_json().encode()

    hit = s.board_cache.cached(key, build)
    body = hit[0] if hit is not None else await run_in_threadpool(s.board_cache.get, key, build)
    return Response(content=body, media_type="application/json")


def _leaderboard(
    s: Services,
    lang: str | None,
    role: Literal["submitter", "reviewer"] | None,
    kind: str | None,
    tournament: int | None,
    after_cutoff: bool,
    created_after: dt.date | None,
) -> Leaderboard:
    """The board of these filters as stored, with each row's rates, cost and metadata."""
    meta = s.model_cache.get("models", lambda: model_meta(s.pool))
    window, ask = None, None
    if after_cutoff:
        window, ask = cutoff_window(dates_of(meta)), CUTOFF
    elif created_after is not None:
        window, ask = after_window(created_after.isoformat()), created_after.isoformat()
    if window is None or ask is None:
        found = _stored(s, tournament, lang, kind, None)
    else:
        found = _windowed(s, tournament, lang, kind, window, ask)
    rows = [_row(r, role, meta.get(r.model)) for r in found.rows]
    goal = None if tournament is None else adaptive_goal(s.pool, tournament)
    if goal is not None:
        rows = _placed(rows, goal)
    if role is not None:
        rows.sort(key=lambda r: (r.rating is None, -(r.rating or 0.0), r.model))
    snapshot = found.snapshot
    return Leaderboard(
        language=lang,
        kind=kind,
        role=role,
        window=None if window is None else window.split(":")[0] if after_cutoff else window,
        tournament=tournament,
        computed_at=None if snapshot is None else snapshot.computed_at,
        current=found.current,
        match_count=0 if snapshot is None or not found.rows else snapshot.match_count,
        provisional_below=PROVISIONAL_MATCHES,
        goal=None if goal is None else Goal(target_width=goal.target_width, separate=goal.separate),
        rows=rows,
    )


def _placed(rows: list[LeaderboardRow], goal: EngineGoal) -> list[LeaderboardRow]:
    """An adaptive tournament's board: provisional until the goal holds for a row's
    neighbours (the tournament's own stopping rule), not by a match count."""
    rated = [
        Interval(r.model, r.rating, r.ci_low, r.ci_high, r.matches)
        for r in rows
        if r.rating is not None and r.ci_low is not None and r.ci_high is not None
    ]
    open_models = unplaced(rated, goal)
    known = {i.model for i in rated}
    return [
        r.model_copy(update={"provisional": r.model in open_models or r.model not in known})
        for r in rows
    ]


def _row(r: BoardRow, role: str | None, meta: DictRow | None) -> LeaderboardRow:
    """A stored row as shown: every engine column as stored, cost at the model's current
    price, and the model's metadata."""
    price = None if meta is None else (meta["price_input"], meta["price_output"])
    cost, latency = _cost_and_latency(r.usage, price)
    shown: dict[str, Any] = dict(r)
    if role is not None:
        shown.update(rating=getattr(r, role), ci_low=None, ci_high=None, rank_ub=None)
    return LeaderboardRow(
        **shown,
        cost=cost,
        latency=latency,
        per_point=_per_point(r, cost),
        organization=None if meta is None else meta["organization"],
        license=None if meta is None else meta["license"],
        knowledge_cutoff=None if meta is None else meta["knowledge_cutoff"],
    )


def _cost_and_latency(
    used: Usage | None, price: tuple[float | None, float | None] | None
) -> tuple[float | None, float | None]:
    """Stored token counts x the model's current price per million; mean answer latency."""
    if used is None:
        return None, None
    cost = None
    if price is not None and price != (None, None):
        cost = (
            used.prompt_tokens * (price[0] or 0.0) + used.completion_tokens * (price[1] or 0.0)
        ) / 1e6
    return cost, used.latency_s if used.answers else None


def _per_point(r: BoardRow, cost: float | None) -> PerPoint | None:
    used, narrowed = r.usage, r.narrowed
    if used is None or narrowed is None or narrowed <= 0:
        return None
    return PerPoint(
        tokens=(used.prompt_tokens + used.completion_tokens) / narrowed,
        ci_seconds=None if used.ci_seconds is None else used.ci_seconds / narrowed,
        cost=None if cost is None else cost / narrowed,
    )


@router.get(
    "/leaderboard/matrix", operation_id="get_leaderboard_matrix", responses=error_responses(422)
)
def get_matrix(
    s: ServicesDep,
    tournament: TournamentQuery = None,
    language: Language | None = None,
    kind: Kind | None = None,
) -> Matrix:
    """Head to head over finished matches: win fractions (ties left out) and match counts."""
    lang = None if language is None else language.value
    tallies = s.matrix_cache.get(
        ("matrix", tournament, lang, kind), lambda: pair_tallies(s.pool, tournament, lang, kind)
    )
    found = head_to_head(tallies)
    return Matrix(
        models=list(found.models),
        win_fraction=[list(row) for row in found.win_fraction],
        matches=[list(row) for row in found.matches],
    )


def _result_line(row: dict[str, Any]) -> str:
    """One line as `arena tournament --results` writes it (MatchRecord / MatchFailure)."""
    line: dict[str, Any] = {
        "task": row["task"],
        "language": row["language"],
        "kind": row["kind"],
        "a": row["a"],
        "b": row["b"],
    }
    if row["status"] == MatchStatus.FAILED:
        line.update(failed=row["reason"] or "failed", at_fault=row["at_fault"], fault=row["fault"])
    else:
        result = row["result"]
        line.update(
            winner="tie" if result == "tie" else ("a" if result == row["a"] else "b"),
            result=result,
            score=row["score"],
            rounds=[
                {**r, "winner_model": {"submitter": r["submitter"], "reviewer": r["reviewer"]}
                 .get(r["winner"])}
                for r in row["rounds"]
            ],
        )  # fmt: skip
    finished = row["finished_at"]
    if row["ci_seconds"] is not None:
        line.update(ci_seconds=round(float(row["ci_seconds"]), 3))
    if row["rules_version"] is not None:  # the rules its rounds were judged under
        line.update(rules_version=row["rules_version"])
    if row["unguarded"]:  # a run of a patch carried no tripwire that must fail
        line.update(unguarded=True)
    line.update(
        match=row["id"],
        tournament=row["tournament_id"],
        finished_at=None if finished is None else finished.isoformat(),
    )
    return json.dumps(line, allow_nan=False, default=_finite) + "\n"


def _finite(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    raise TypeError(f"not JSON: {type(value).__name__}")


@router.get(
    "/results.jsonl",
    operation_id="export_results",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "one finished or failed match a line, as `arena tournament"
            " --results` writes and `arena ratings --results` reads them: {task, language, kind,"
            " a, b, winner: a|b|tie, result, score, rounds} or {task, ..., failed, at_fault, fault}"
            " (finished_at: when the match ended, ISO 8601: `arena ratings` replays Elo in that"
            " order, then by match id, as the service does)"
            " (at_fault: the model whose endpoint failed the match, or null; fault: the component"
            " at fault: model_endpoint, sandbox, worker or infrastructure, or null if not known);"
            " each with its match and tournament ids",
            "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
        },
        **error_responses(422),
    },
)
def export_results(pool: PoolDep, tournament: TournamentQuery = None) -> StreamingResponse:
    """Every finished match, streamed, so anyone can recompute the ratings."""

    def lines() -> Iterator[str]:
        for row in iter_results(pool, tournament):
            yield _result_line(row)

    return StreamingResponse(lines(), media_type="application/x-ndjson")
