"""What /metrics reports, read at scrape time from PostgreSQL and Redis.

Workers run in other processes and containers, so nothing is counted in memory: every
figure is an aggregate over the store (one snapshot, read only) or a list length in the
broker, and every API process reports the same totals for the whole service. The store's
aggregates scan `answers` and `ci_runs` whole (about 0.6 s at 400,000 answers on a loaded
machine), so a scrape waits only briefly for them and otherwise gets the previous reading."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass

import psycopg
import redis

from arena.store.figures import (
    CI_DURATION_BOUNDS_S,
    LATENCY_BOUNDS_S,
    MATCH_STATUSES,
    STATEMENT_TIMEOUT_MS,
    TOURNAMENT_STATUSES,
    Histogram,
    ModelUsage,
    StoreFigures,
    cost_usd,
    read_store,
)

__all__ = [
    "CI_DURATION_BOUNDS_S",
    "LATENCY_BOUNDS_S",
    "MATCH_STATUSES",
    "STATEMENT_TIMEOUT_MS",
    "TOURNAMENT_STATUSES",
    "Histogram",
    "ModelUsage",
    "Reading",
    "StoreFigures",
    "StoreReader",
    "cost_usd",
    "priority_keys",
    "read_queue_depths",
    "read_store",
]

# kombu's Redis transport keeps a queue's prioritized messages under `queue\x06\x16<step>`
_PRIORITY_SEPARATOR = "\x06\x16"
_PRIORITY_STEPS = (0, 3, 6, 9)


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
