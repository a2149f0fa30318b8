"""GET /metrics: the whole service in Prometheus' text format, read at scrape time.

Beside /api (Prometheus scrapes `/metrics` by convention) and public like every read: it shows
counts, model names, tokens and costs the leaderboard already shows. A source that does not
answer (PostgreSQL or Redis) never fails the scrape: its figures are left out and
`arena_metrics_source_up{source}` says 0, with the reason in the server's log. The store is
read in the background when it takes long (see api/metrics_figures.py)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator

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

from api.deps import Services, ServicesDep
from api.metrics_figures import (
    Histogram,
    StoreFigures,
    StoreReader,
    read_queue_depths,
    read_store,
)
from arena.vocabulary import OPEN_MATCH, QUEUES, MatchStatus

log = logging.getLogger(__name__)
router = APIRouter()
FRESH_WAIT_S = 0.05  # a scrape waits this long for current store figures, else gets the last
FIRST_WAIT_S = 30.0  # the first scrape of a process waits for its read (5 s per statement)
_ENDED = frozenset(MatchStatus) - set(OPEN_MATCH)  # counters: a match never leaves these


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
    """The store's latest reading and the broker's queues, read now; a source that fails is
    reported down (`arena_metrics_source_up` 0) and its figures are left out."""

    def __init__(self, store: StoreReader, broker_url: str) -> None:
        self._store = store
        self._broker_url = broker_url

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily(
            "arena_metrics_source_up", "1 when the source answered its latest read",
            labels=["source"],
        )  # fmt: skip
        seconds = GaugeMetricFamily(
            "arena_metrics_source_seconds", "How long the latest read of the source took",
            labels=["source"],
        )  # fmt: skip
        reading = self._store.reading()
        if reading is None or reading.figures is None:
            why = "its first read is not done" if reading is None else reading.error
            log.warning("/metrics: PostgreSQL does not answer: %s", why)
            up.add_metric(["postgres"], 0)
        else:
            up.add_metric(["postgres"], 1)
            yield from store_metrics(reading.figures)
            yield GaugeMetricFamily(
                "arena_metrics_store_age_seconds",
                "Age of the store's figures: a big store is read in the background",
                value=time.monotonic() - reading.started,
            )
        if reading is not None:
            seconds.add_metric(["postgres"], reading.seconds)
        started = time.perf_counter()
        try:
            depths: dict[str, int] | None = read_queue_depths(self._broker_url, QUEUES)
        except redis.RedisError as exc:
            log.warning("/metrics: Redis does not answer: %s: %s", type(exc).__name__, exc)
            depths = None
        up.add_metric(["redis"], 0 if depths is None else 1)
        seconds.add_metric(["redis"], time.perf_counter() - started)
        if depths is not None:
            yield from queue_metrics(depths)
        yield up
        yield seconds


_readers_lock = threading.Lock()


def _store_reader(request: Request, s: Services) -> StoreReader:
    """One reader per app (so per pool), made by its first scrape."""
    state = request.app.state
    with _readers_lock:
        if getattr(state, "metrics_reader", None) is None:
            pool = s.pool
            state.metrics_reader = StoreReader(
                lambda: read_store(pool), fresh_wait_s=FRESH_WAIT_S, first_wait_s=FIRST_WAIT_S
            )
        reader: StoreReader = state.metrics_reader
    return reader


@router.get("/metrics", include_in_schema=False)
def metrics(s: ServicesDep, request: Request) -> Response:
    """Prometheus' text format, or OpenMetrics when the scraper asks for it; with this API
    process's CPU, memory and open files."""
    registry = CollectorRegistry(auto_describe=False)
    ProcessCollector(registry=registry)
    registry.register(ServiceCollector(_store_reader(request, s), s.settings.broker_url))
    encode, content_type = choose_encoder(request.headers.get("accept", ""))
    return Response(encode(registry), headers={"Content-Type": content_type})
