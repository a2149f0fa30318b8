"""What /metrics reports, read at scrape time from PostgreSQL and Redis.

Workers run in other processes and containers, so nothing is counted in memory: every
figure is an aggregate over the store (one snapshot, read only) or a list length in the
broker, and every API process reports the same totals for the whole service. The store's
aggregates scan `answers` and `ci_runs` whole (about 0.6 s at 400,000 answers on a loaded
machine), so a scrape waits only briefly for them and otherwise gets the previous reading."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any

import psycopg
import redis
from psycopg import sql

from arena.store.pool import Pool

MATCH_STATUSES = ("queued", "running", "done", "failed", "skipped", "cancelled")
TOURNAMENT_STATUSES = ("running", "done", "cancelled")
# model calls take seconds to minutes; CI runs (build and tests in a sandbox) up to the hard limit
LATENCY_BOUNDS_S = (0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0)
CI_DURATION_BOUNDS_S = (1.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1200.0, 1800.0, 3600.0)
# kombu's Redis transport keeps a queue's prioritized messages under `queue\x06\x16<step>`
_PRIORITY_SEPARATOR = "\x06\x16"
_PRIORITY_STEPS = (0, 3, 6, 9)
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
    done = next((r for r in matches if r["status"] == "done"), None)
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


def priority_keys(queue: str) -> list[str]:
    """The Redis lists one Celery queue is stored in (kombu: one per priority step)."""
    return [queue] + [f"{queue}{_PRIORITY_SEPARATOR}{step}" for step in _PRIORITY_STEPS if step]


def read_queue_depths(
    broker_url: str, queues: Sequence[str], timeout_s: float = 1.0
) -> dict[str, int]:
    """Messages waiting in each queue (taken but unacknowledged ones are not counted)."""
    client = redis.Redis.from_url(
        broker_url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s
    )
    try:
        with client.pipeline(transaction=False) as pipe:
            for queue in queues:
                for key in priority_keys(queue):
                    pipe.llen(key)
            lengths = iter(pipe.execute())
    finally:
        client.close()
    return {queue: sum(next(lengths) for _ in priority_keys(queue)) for queue in queues}


@dataclass(frozen=True)
class Reading:
    """One read of the store: its figures, or why there are none."""

    figures: StoreFigures | None
    error: str | None
    started: float  # time.monotonic() when the read began (the snapshot is that old)
    seconds: float  # how long it took


class StoreReader:
    """At most one read of the store at a time, shared by every scrape that comes meanwhile.

    A scrape starts a read (unless one runs) and waits `fresh_wait_s` for it: a small store
    answers within that, so its figures are current. A big one keeps reading in the
    background and the scrape gets the previous reading (its age is reported), so a scrape
    stays fast and a burst of scrapes costs one read. The first scrape waits for its read."""

    def __init__(
        self, read: Callable[[], StoreFigures], fresh_wait_s: float, first_wait_s: float
    ) -> None:
        self._read = read
        self._fresh_wait_s = fresh_wait_s
        self._first_wait_s = first_wait_s
        self._lock = threading.Lock()
        self._pending: Future[Reading] | None = None
        self._latest: Reading | None = None

    def reading(self) -> Reading | None:
        """The newest reading there is after a short wait (None: the first is not done)."""
        with self._lock:
            if self._pending is None:
                self._pending = Future()
                threading.Thread(
                    target=self._run, args=(self._pending,), daemon=True, name="metrics read"
                ).start()
            pending, latest = self._pending, self._latest
        try:
            return pending.result(self._first_wait_s if latest is None else self._fresh_wait_s)
        except FutureTimeout:
            return latest

    def _run(self, pending: Future[Reading]) -> None:
        started = time.monotonic()
        try:
            figures, error = self._read(), None
        except psycopg.Error as exc:  # the store down or restarting: reported, not raised
            figures, error = None, f"{type(exc).__name__}: {exc}"
        except BaseException as exc:  # a bug: the waiting scrape fails with it
            with self._lock:
                self._pending = None
            pending.set_exception(exc)
            return
        done = Reading(figures, error, started, time.monotonic() - started)
        with self._lock:
            self._latest, self._pending = done, None
        pending.set_result(done)
