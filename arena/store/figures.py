"""The store's aggregates for /metrics: counts by status, CI durations, model usage and cost,
all from one read-only snapshot."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from psycopg import sql

from arena.store.pool import Pool
from arena.vocabulary import MatchStatus, TournamentStatus

MATCH_STATUSES = tuple(s.value for s in MatchStatus)
TOURNAMENT_STATUSES = tuple(s.value for s in TournamentStatus)
# model calls take seconds to minutes; CI runs (build and tests in a sandbox) up to the hard limit
LATENCY_BOUNDS_S = (0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0)
CI_DURATION_BOUNDS_S = (1.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1200.0, 1800.0, 3600.0)
STATEMENT_TIMEOUT_MS = 5000  # a scrape never holds a connection longer than this


@dataclass(frozen=True)
class Histogram:
    """Cumulative counts at each upper bound (`le`), the count and the sum of all values."""

    bounds: tuple[float, ...]
    cumulative: tuple[int, ...]
    count: int
    total: float


@dataclass(frozen=True)
class ModelUsage:
    """Every stored answer of one model (errors included: they cost time and tokens too)."""

    model: str
    latency_s: Histogram
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None  # None: the model has no price


@dataclass(frozen=True)
class StoreFigures:
    matches: dict[str, int]  # by status, every status present
    match_results: dict[str, int]  # done matches: "win" (one model won) or "tie"
    tournaments: dict[str, int]  # by status, every status present
    ci_runs: dict[str, Histogram]  # duration by CI status (stored runs: a cache hit is none)
    models: list[ModelUsage]


def cost_usd(
    prompt_tokens: int, completion_tokens: int, price_in: float | None, price_out: float | None
) -> float | None:
    """Tokens x the model's current price per million, as the leaderboard shows it."""
    if price_in is None and price_out is None:
        return None
    return (prompt_tokens * (price_in or 0.0) + completion_tokens * (price_out or 0.0)) / 1e6


def _bucket_columns(column: str, bounds: Sequence[float]) -> sql.Composable:
    """`count(*) FILTER (WHERE column <= bound) AS le_i` for each bound: exactly `le`."""
    return sql.SQL(", ").join(
        sql.SQL("count(*) FILTER (WHERE {} <= {}::float8) AS {}").format(
            sql.Identifier(column), sql.Literal(bound), sql.Identifier(f"le_{i}")
        )
        for i, bound in enumerate(bounds)
    )


def _histogram(row: Mapping[str, Any], bounds: tuple[float, ...]) -> Histogram:
    return Histogram(
        bounds=bounds,
        cumulative=tuple(int(row[f"le_{i}"]) for i in range(len(bounds))),
        count=int(row["count"]),
        total=float(row["total"] or 0.0),
    )


def _by_status(rows: Iterable[Mapping[str, Any]], statuses: Sequence[str]) -> dict[str, int]:
    found = {status: 0 for status in statuses}
    for row in rows:
        found[row["status"]] = int(row["count"])
    return found


def read_store(pool: Pool, timeout_s: float = 2.0) -> StoreFigures:
    """Four aggregate queries in one read-only snapshot: totals that agree with each other."""
    with pool.connection(timeout=timeout_s) as conn, conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        conn.execute(
            sql.SQL("SET LOCAL statement_timeout = {}").format(sql.Literal(STATEMENT_TIMEOUT_MS))
        )
        matches = conn.execute(
            "SELECT status, count(*) AS count, count(*) FILTER (WHERE result = 'tie') AS ties"
            " FROM matches GROUP BY status"
        ).fetchall()
        tournaments = conn.execute(
            "SELECT status, count(*) AS count FROM tournaments GROUP BY status"
        ).fetchall()
        ci_runs = conn.execute(
            sql.SQL(
                "SELECT status, count(*) AS count, sum(duration_s) AS total, {}"
                " FROM ci_runs GROUP BY status ORDER BY status"
            ).format(_bucket_columns("duration_s", CI_DURATION_BOUNDS_S))
        ).fetchall()
        answers = conn.execute(
            sql.SQL(
                "SELECT u.*, m.price_input, m.price_output FROM ("
                "  SELECT model, count(*) AS count, sum(latency_s) AS total,"
                "   coalesce(sum(prompt_tokens), 0) AS prompt_tokens,"
                "   coalesce(sum(completion_tokens), 0) AS completion_tokens, {}"
                "  FROM answers GROUP BY model) u"
                " LEFT JOIN models m ON m.name = u.model ORDER BY u.model"
            ).format(_bucket_columns("latency_s", LATENCY_BOUNDS_S))
        ).fetchall()
    done = next((r for r in matches if r["status"] == MatchStatus.DONE), None)
    ties = 0 if done is None else int(done["ties"])
    done_count = 0 if done is None else int(done["count"])
    return StoreFigures(
        matches=_by_status(matches, MATCH_STATUSES),
        match_results={"win": done_count - ties, "tie": ties},
        tournaments=_by_status(tournaments, TOURNAMENT_STATUSES),
        ci_runs={r["status"]: _histogram(r, CI_DURATION_BOUNDS_S) for r in ci_runs},
        models=[
            ModelUsage(
                model=r["model"],
                latency_s=_histogram(r, LATENCY_BOUNDS_S),
                prompt_tokens=int(r["prompt_tokens"]),
                completion_tokens=int(r["completion_tokens"]),
                cost_usd=cost_usd(
                    int(r["prompt_tokens"]),
                    int(r["completion_tokens"]),
                    r["price_input"],
                    r["price_output"],
                ),
            )
            for r in answers
        ],
    )
