"""/api/leaderboard (stored snapshots, never fitted on read), its matrices, every result."""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Iterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse

from api.deps import PoolDep, ServicesDep
from api.errors import ApiError
from api.queue import enqueue
from api.schemas.common import error_responses
from api.schemas.leaderboard import Leaderboard, LeaderboardRow, Matrix
from api.schemas.tasks import Kind
from arena.store.models import model_prices
from arena.store.snapshots import latest_snapshot
from arena.store.standings import iter_results, pair_tallies
from arena.tasks.schema import Language

router = APIRouter(tags=["leaderboard"])
TournamentQuery = Annotated[int | None, Query(ge=1, le=2**62, description="one tournament")]


def _scope(
    language: Language | None,
    role: str | None,
    kind: str | None,
    created_after: dt.date | None,
) -> tuple[str, str]:
    given = {
        k: v
        for k, v in (
            ("language", language),
            ("role", role),
            ("kind", kind),
            ("created_after", created_after),
        )
        if v is not None
    }
    if len(given) > 1:
        raise ApiError(
            422, ["query", sorted(given)[1]], f"give one of {', '.join(sorted(given))}, not several"
        )
    if language is not None:
        return "language", language.value
    if role is not None:
        return "role", ""
    if kind is not None:
        return "kind", kind
    if created_after is not None:
        return "created_after", created_after.isoformat()
    return "overall", ""


@router.get("/leaderboard", operation_id="get_leaderboard", responses=error_responses(422))
def get_leaderboard(
    s: ServicesDep,
    language: Language | None = None,
    role: Literal["submitter", "reviewer"] | None = None,
    kind: Kind | None = None,
    tournament: TournamentQuery = None,
    created_after: Annotated[
        dt.date | None, Query(description="only tasks whose issue was opened after this day")
    ] = None,
) -> Leaderboard:
    """The latest rating snapshot of the scope, with cost and latency per model.

    A `created_after` window is computed by a worker on first request (`computed_at` is null
    until it is stored); the other scopes are refreshed after matches finish."""
    scope, value = _scope(language, role, kind, created_after)
    snapshot = latest_snapshot(s.pool, tournament, scope, value)
    if scope == "created_after":
        _refresh_window(s, tournament, value, snapshot)
    if snapshot is None:
        return Leaderboard(
            scope=scope, scope_value=value, tournament=tournament, computed_at=None,
            match_count=0, rows=[],
        )  # fmt: skip
    prices = s.price_cache.get("prices", lambda: model_prices(s.pool))
    rows = []
    for r in snapshot["rows"]:
        cost, latency = _cost_and_latency(r.get("usage"), prices.get(r["model"]))
        if scope == "role":
            assert role is not None
            rows.append(LeaderboardRow(
                model=r["model"], rating=r.get(role), ci_low=None, ci_high=None, rank_ub=None,
                matches=None, wins=None, losses=None, ties=None, elo=None, cost=cost,
                latency=latency,
            ))  # fmt: skip
        else:
            rows.append(LeaderboardRow(**{**_fields(r), "cost": cost, "latency": latency}))
    if scope == "role":
        rows.sort(key=lambda r: (r.rating is None, -(r.rating or 0.0), r.model))
    return Leaderboard(
        scope=scope,
        scope_value=value,
        tournament=tournament,
        computed_at=snapshot["computed_at"],
        match_count=snapshot["match_count"],
        rows=rows,
    )


def _refresh_window(
    s: ServicesDep, tournament: int | None, value: str, snapshot: dict[str, Any] | None
) -> None:
    """Ask a worker for the window's leaderboard when there is none or it is older than the
    latest overall snapshot (new results came in); once per overall snapshot."""
    overall = latest_snapshot(s.pool, tournament, "overall", "")
    newest = None if overall is None else overall["computed_at"]
    if snapshot is not None and (newest is None or snapshot["computed_at"] >= newest):
        return
    s.refresh_requests.get(
        (tournament, value, newest),
        lambda: enqueue(s.queue, "arena.window_ratings", (tournament or 0, value), "control"),
    )


def _cost_and_latency(
    used: dict[str, float] | None, price: tuple[float | None, float | None] | None
) -> tuple[float | None, float | None]:
    """Stored token counts x the model's current price per million; mean answer latency."""
    if used is None:
        return None, None
    cost = None
    if price is not None and price != (None, None):
        cost = (
            used["prompt_tokens"] * (price[0] or 0.0)
            + used["completion_tokens"] * (price[1] or 0.0)
        ) / 1e6
    return cost, used["latency_s"]


def _fields(row: dict[str, Any]) -> dict[str, Any]:
    keys = ("model", "rating", "ci_low", "ci_high", "rank_ub", "matches", "wins", "losses",
            "ties", "elo")  # fmt: skip
    return {k: row.get(k) for k in keys}


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
    models = sorted({r["a"] for r in tallies} | {r["b"] for r in tallies})
    index = {m: i for i, m in enumerate(models)}
    n = len(models)
    wins = [[0] * n for _ in range(n)]
    games = [[0] * n for _ in range(n)]
    for r in tallies:
        i, j, count = index[r["a"]], index[r["b"]], int(r["n"])
        games[i][j] += count
        games[j][i] += count
        if r["result"] == r["a"]:
            wins[i][j] += count
        elif r["result"] == r["b"]:
            wins[j][i] += count
    fractions: list[list[float | None]] = [
        [
            None if wins[i][j] + wins[j][i] == 0 else wins[i][j] / (wins[i][j] + wins[j][i])
            for j in range(n)
        ]
        for i in range(n)
    ]
    return Matrix(models=models, win_fraction=fractions, matches=games)


def _result_line(row: dict[str, Any]) -> str:
    """One line as `arena tournament --results` writes it (MatchRecord / MatchFailure)."""
    line: dict[str, Any] = {
        "task": row["task"],
        "language": row["language"],
        "kind": row["kind"],
        "a": row["a"],
        "b": row["b"],
    }
    if row["status"] == "failed":
        line.update(failed=row["reason"] or "failed", at_fault=None)
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
    line.update(match=row["id"], tournament=row["tournament_id"])
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
            " a, b, winner: a|b|tie, result, score, rounds} or {task, ..., failed, at_fault};"
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
