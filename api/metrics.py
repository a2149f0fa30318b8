"""GET /metrics: the whole service in Prometheus' text format, read at scrape time.

Beside /api (Prometheus scrapes `/metrics` by convention) and public like every read: it shows
counts, model names, tokens and costs the leaderboard already shows. A source that does not
answer (PostgreSQL or Redis) never fails the scrape: its figures are left out and
`arena_metrics_source_up{source}` says 0, with the reason in the server's log."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

import psycopg
import redis
from fastapi import APIRouter, Request, Response
from prometheus_client import CollectorRegistry, ProcessCollector
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector

from api.deps import ServicesDep
from api.metrics_figures import Histogram, StoreFigures, read_queue_depths, read_store
from api.routes.health import QUEUES
from arena.store.pool import Pool

log = logging.getLogger(__name__)
router = APIRouter()
T = TypeVar("T")
_ENDED = ("done", "failed", "skipped", "cancelled")  # counters: a match never leaves these
_UNFINISHED = ("queued", "running")


def _buckets(found: Histogram) -> list[tuple[str, float]]:
    counts = zip(found.bounds, found.cumulative, strict=True)
    pairs = [(str(bound), float(count)) for bound, count in counts]
    return [*pairs, ("+Inf", float(found.count))]


def store_metrics(figures: StoreFigures) -> Iterator[Metric]:
    """The store's figures as metric families (pure: the test reads them back)."""
    ended = CounterMetricFamily(
        "arena_matches", "Matches that ended, by how (done, failed, skipped, cancelled)",
        labels=["status"],
    )  # fmt: skip
    unfinished = GaugeMetricFamily(
        "arena_matches_unfinished", "Matches waiting or being played now", labels=["status"]
    )
    for status, count in figures.matches.items():
        (ended if status in _ENDED else unfinished).add_metric([status], count)
    yield ended
    yield unfinished
    results = CounterMetricFamily(
        "arena_match_results", "Done matches: one model won, or a tie", labels=["result"]
    )
    for result, count in figures.match_results.items():
        results.add_metric([result], count)
    yield results
    tournaments = GaugeMetricFamily("arena_tournaments", "Tournaments by status", labels=["status"])
    for status, count in figures.tournaments.items():
        tournaments.add_metric([status], count)
    yield tournaments
    ci = HistogramMetricFamily(
        "arena_ci_run_duration_seconds",
        "Stored CI runs (a cached result reused is not a run; a timeout is re-run, not stored)"
        " by outcome",
        labels=["status"],
    )
    for status, found in figures.ci_runs.items():
        ci.add_metric([status], _buckets(found), found.total)
    yield ci
    latency = HistogramMetricFamily(
        "arena_model_call_latency_seconds", "Model calls (stored answers) by model",
        labels=["model"],
    )  # fmt: skip
    tokens = CounterMetricFamily(
        "arena_model_tokens", "Tokens of stored answers: input (prompt) and output (completion)",
        labels=["model", "direction"],
    )  # fmt: skip
    cost = CounterMetricFamily(
        "arena_model_cost_usd",
        "Tokens x the model's current price per million (priced models only)",
        labels=["model"],
    )
    for usage in figures.models:
        latency.add_metric([usage.model], _buckets(usage.latency_s), usage.latency_s.total)
        tokens.add_metric([usage.model, "input"], usage.prompt_tokens)
        tokens.add_metric([usage.model, "output"], usage.completion_tokens)
        if usage.cost_usd is not None:
            cost.add_metric([usage.model], usage.cost_usd)
    yield latency
    yield tokens
    yield cost


def queue_metrics(depths: dict[str, int]) -> Iterator[Metric]:
    found = GaugeMetricFamily(
        "arena_queue_depth", "Celery messages waiting in the broker, by queue", labels=["queue"]
    )
    for queue, depth in depths.items():
        found.add_metric([queue], depth)
    yield found


class ServiceCollector(Collector):
    """Reads PostgreSQL and Redis on each collect(); a source that fails is reported down."""

    def __init__(self, pool: Pool, broker_url: str) -> None:
        self._pool = pool
        self._broker_url = broker_url

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily(
            "arena_metrics_source_up", "1 when the source answered this scrape", labels=["source"]
        )
        seconds = GaugeMetricFamily(
            "arena_metrics_source_seconds", "Time this scrape spent reading the source",
            labels=["source"],
        )  # fmt: skip
        figures = self._read("postgres", lambda: read_store(self._pool), psycopg.Error, up, seconds)
        depths = self._read(
            "redis", lambda: read_queue_depths(self._broker_url, QUEUES), redis.RedisError, up,
            seconds,
        )  # fmt: skip
        if figures is not None:
            yield from store_metrics(figures)
        if depths is not None:
            yield from queue_metrics(depths)
        yield up
        yield seconds

    @staticmethod
    def _read(
        source: str,
        read: Callable[[], T],
        errors: type[Exception],
        up: GaugeMetricFamily,
        seconds: GaugeMetricFamily,
    ) -> T | None:
        started = time.perf_counter()
        try:
            found: T | None = read()
        except errors as exc:
            log.warning("/metrics: %s does not answer: %s: %s", source, type(exc).__name__, exc)
            found = None
        up.add_metric([source], 0 if found is None else 1)
        seconds.add_metric([source], time.perf_counter() - started)
        return found


@router.get("/metrics", include_in_schema=False)
def metrics(s: ServicesDep, request: Request) -> Response:
    """Prometheus' text format, or OpenMetrics when the scraper asks for it; with this API
    process's CPU, memory and open files. A registry per scrape keeps nothing between them."""
    registry = CollectorRegistry(auto_describe=False)
    ProcessCollector(registry=registry)
    registry.register(ServiceCollector(s.pool, s.settings.broker_url))
    encode, content_type = choose_encoder(request.headers.get("accept", ""))
    return Response(encode(registry), headers={"Content-Type": content_type})
