"""GET /metrics against a real PostgreSQL and Redis: the scrape says what the store holds."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from psycopg.types.json import Jsonb

from api.core.config import ApiSettings
from api.main import create_app
from api.metrics_figures import (
    CI_DURATION_BOUNDS_S,
    LATENCY_BOUNDS_S,
    StoreFigures,
    StoreReader,
)
from ci_runner import CISettings
from tests.api.conftest import ADMIN, SECRET, demo_jsonl
from tests.arena.scripted_server import Reply, scripted_server
from tests.servers import Redis
from tests.workers.conftest import Workers

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]
PRICES = {"m1": (2.0, 8.0), "m2": (1.5, None), "m3": (None, None)}  # per million tokens


def scrape(client: TestClient) -> Samples:
    answer = client.get("/metrics")
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(answer.text)
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, frozenset(labels.items()))]


def names(samples: Samples) -> set[str]:
    return {name for name, _ in samples}


@dataclass
class Seeded:
    """What was written, kept beside the database so expectations never come from SQL."""

    matches: Counter[str] = field(default_factory=Counter)
    ties: int = 0
    tournaments: Counter[str] = field(default_factory=Counter)
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    tokens: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    ci: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))


def seed(database_url: str, rng: random.Random) -> Seeded:
    """Tournaments, matches of every status, rounds, answers and CI runs, as workers store
    them; some values sit exactly on a bucket's bound (Prometheus' `le` includes it)."""
    seeded = Seeded()
    with psycopg.connect(database_url, autocommit=True) as conn:
        for name, (price_in, price_out) in PRICES.items():
            conn.execute(
                "INSERT INTO models (name, spec, price_input, price_output) VALUES (%s, %s, %s, %s)",
                (name, Jsonb({"base_url": "http://127.0.0.1:9/v1", "model": name}), price_in,
                 price_out),
            )  # fmt: skip
        tournaments = []
        for status in ("running", "running", "done", "cancelled"):
            row = conn.execute(
                "INSERT INTO tournaments (models, tasks_spec, status) VALUES (%s, 'demo', %s)"
                " RETURNING id",
                (list(PRICES), status),
            ).fetchone()
            assert row is not None
            tournaments.append(row[0])
            seeded.tournaments[status] += 1
        players = [*PRICES, "oracle"]
        statuses = ["queued", "running", "done", "done", "done", "failed", "skipped", "cancelled"]
        for i in range(60):
            a, b = rng.sample(players, 2)
            status = rng.choice(statuses)
            result = rng.choice([a, b, "tie"]) if status == "done" else None
            task = conn.execute(
                "INSERT INTO tasks (instance_id, fingerprint, language, task)"
                " VALUES (%s, 'f', 'python', %s) RETURNING id",
                (f"o__r-{i}", Jsonb({"test_patch": "x"})),
            ).fetchone()
            assert task is not None
            match = conn.execute(
                "INSERT INTO matches (tournament_id, task_id, a, b, status, result)"
                " VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
                (tournaments[i % len(tournaments)], task[0], a, b, status, result),
            ).fetchone()
            assert match is not None
            seeded.matches[status] += 1
            seeded.ties += result == "tie"
            for idx, (submitter, reviewer) in enumerate(((a, b), (b, a))):
                round_ = conn.execute(
                    "INSERT INTO rounds (match_id, idx, submitter, reviewer)"
                    " VALUES (%s, %s, %s, %s) RETURNING id",
                    (match[0], idx, submitter, reviewer),
                ).fetchone()
                assert round_ is not None
                for role, model in (("submitter", submitter), ("reviewer", reviewer)):
                    if status == "queued" or rng.random() < 0.2:
                        continue  # not asked yet
                    latency = rng.choice([*LATENCY_BOUNDS_S, rng.uniform(0, 900)])
                    used = [rng.randrange(0, 9000), rng.randrange(0, 900)]
                    conn.execute(
                        "INSERT INTO answers (round_id, role, model, answer, latency_s,"
                        " prompt_tokens, completion_tokens) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                        (round_[0], role, model, Jsonb({"raw_text": "x"}), latency, *used),
                    )
                    seeded.latencies[model].append(latency)
                    seeded.tokens[model] = [x + y for x, y in zip(seeded.tokens[model], used,
                                                                  strict=True)]  # fmt: skip
        for i in range(40):
            status = rng.choice(["passed", "failed", "error"])
            duration = rng.choice([*CI_DURATION_BOUNDS_S, rng.uniform(0, 5000)])
            conn.execute(
                "INSERT INTO ci_runs (key, request, result, status, duration_s)"
                " VALUES (%s, '{}', '{}', %s, %s)",
                (f"k{i}", status, duration),
            )
            seeded.ci[status].append(duration)
    return seeded


def assert_histogram(
    samples: Samples, name: str, label: tuple[str, str], values: list[float],
    bounds: tuple[float, ...],
) -> None:  # fmt: skip
    labels = dict([label])
    for bound in bounds:
        assert value(samples, f"{name}_bucket", **labels, le=str(bound)) == sum(
            v <= bound for v in values
        ), (label, bound)
    assert value(samples, f"{name}_bucket", **labels, le="+Inf") == len(values)
    assert value(samples, f"{name}_count", **labels) == len(values)
    assert value(samples, f"{name}_sum", **labels) == pytest.approx(sum(values))


def test_a_scrape_holds_what_the_store_and_the_broker_hold(
    client: TestClient, api_settings: ApiSettings
) -> None:
    seeded = seed(api_settings.database_url, random.Random(13))
    queue = client.app.state.services.queue  # type: ignore[attr-defined]
    for _ in range(3):
        queue.send_task("arena.nothing", args=(1,), queue="ci")
    queue.send_task("arena.nothing", args=(2,), queue="llm", priority=6)  # its own Redis list
    samples = scrape(client)

    for status in ("done", "failed", "skipped", "cancelled"):
        assert value(samples, "arena_matches_total", status=status) == seeded.matches[status]
    for status in ("queued", "running"):
        assert value(samples, "arena_matches_unfinished", status=status) == seeded.matches[status]
    assert value(samples, "arena_match_results_total", result="tie") == seeded.ties
    assert value(samples, "arena_match_results_total", result="win") == (
        seeded.matches["done"] - seeded.ties
    )
    for status in ("running", "done", "cancelled"):
        assert value(samples, "arena_tournaments", status=status) == seeded.tournaments[status]

    assert set(seeded.ci) == {"passed", "failed", "error"}
    for status, durations in seeded.ci.items():
        assert_histogram(samples, "arena_ci_run_duration_seconds", ("status", status), durations,
                         CI_DURATION_BOUNDS_S)  # fmt: skip
    assert set(seeded.latencies) == {*PRICES, "oracle"}
    for model, latencies in seeded.latencies.items():
        assert_histogram(samples, "arena_model_call_latency_seconds", ("model", model), latencies,
                         LATENCY_BOUNDS_S)  # fmt: skip
        prompt, completion = seeded.tokens[model]
        assert value(samples, "arena_model_tokens_total", model=model, direction="input") == prompt
        assert (
            value(samples, "arena_model_tokens_total", model=model, direction="output")
            == completion
        )
    cost = {
        labels: v for (name, labels), v in samples.items() if name == "arena_model_cost_usd_total"
    }
    assert cost == {  # unpriced models (m3, the baselines) have no cost, not a zero one
        frozenset({("model", "m1")}): pytest.approx(
            (seeded.tokens["m1"][0] * 2.0 + seeded.tokens["m1"][1] * 8.0) / 1e6
        ),
        frozenset({("model", "m2")}): pytest.approx(seeded.tokens["m2"][0] * 1.5 / 1e6),
    }
    assert cost[frozenset({("model", "m1")})] > 0

    assert value(samples, "arena_queue_depth", queue="ci") == 3
    assert value(samples, "arena_queue_depth", queue="llm") == 1
    assert value(samples, "arena_queue_depth", queue="control") == 0
    assert value(samples, "arena_metrics_source_up", source="postgres") == 1
    assert value(samples, "arena_metrics_source_up", source="redis") == 1
    assert value(samples, "arena_metrics_store_age_seconds") >= 0
    assert "process_resident_memory_bytes" in names(samples)


def test_an_empty_store_reports_zeros_not_absent_series(client: TestClient) -> None:
    samples = scrape(client)
    assert value(samples, "arena_matches_total", status="failed") == 0
    assert value(samples, "arena_matches_unfinished", status="queued") == 0
    assert value(samples, "arena_tournaments", status="running") == 0
    assert value(samples, "arena_queue_depth", queue="control") == 0
    assert not [n for n in names(samples) if n.startswith("arena_model_")]


def test_a_down_redis_leaves_out_the_queues_and_says_so(client: TestClient, broker: Redis) -> None:
    broker.stop()
    samples = scrape(client)
    assert value(samples, "arena_metrics_source_up", source="redis") == 0
    assert "arena_queue_depth" not in names(samples)
    assert value(samples, "arena_metrics_source_up", source="postgres") == 1
    assert value(samples, "arena_matches_total", status="done") == 0


def test_a_down_postgres_leaves_out_the_store_and_says_so(
    client: TestClient, api_settings: ApiSettings, postgres: object
) -> None:
    url = api_settings.database_url
    database = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {database} WITH (FORCE)")
    samples = scrape(client)
    assert value(samples, "arena_metrics_source_up", source="postgres") == 0
    assert "arena_matches_total" not in names(samples)
    assert value(samples, "arena_metrics_source_up", source="redis") == 1
    assert value(samples, "arena_queue_depth", queue="ci") == 0


def test_metrics_sits_beside_the_api_outside_its_schema_and_the_website(
    api_settings: ApiSettings, ci_settings: CISettings, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<html>the website</html>")
    settings = api_settings.model_copy(update={"web_dir": site})
    with TestClient(create_app(settings, ci_settings)) as client:
        assert "arena_matches_total" in names(scrape(client))
        schema = client.get("/api/openapi.json").json()
        assert not [p for p in schema["paths"] if "metrics" in p]
        assert "the website" in client.get("/").text


def test_a_slow_store_read_serves_the_last_figures_and_runs_once_for_all_scrapes() -> None:
    """The reader alone: a read that blocks until released stands for a big store."""
    release = threading.Event()
    calls: list[int] = []

    def read() -> StoreFigures:
        calls.append(len(calls))
        if len(calls) == 2:
            release.wait(60)
        done = {"done": len(calls)}
        return StoreFigures(matches=done, match_results={}, tournaments={}, ci_runs={}, models=[])

    reader = StoreReader(read, fresh_wait_s=0.05, first_wait_s=60)
    first = reader.reading()
    assert first is not None and first.figures is not None
    assert first.figures.matches == {"done": 1} and first.error is None
    with ThreadPoolExecutor(4) as pool:  # the second read blocks: every scrape gets the first
        meanwhile = list(pool.map(lambda _: reader.reading(), range(4)))
    assert all(r is first for r in meanwhile)
    deadline = time.monotonic() + 60
    while len(calls) < 2:  # the background read may not have begun yet on a loaded machine
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert len(calls) == 2  # one read for the four scrapes
    release.set()
    while (latest := reader.reading()) is first:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert latest is not None and latest.figures is not None
    assert latest.figures.matches["done"] >= 2


def test_a_failing_store_read_is_a_reading_without_figures() -> None:
    def read() -> StoreFigures:
        raise psycopg.OperationalError("the server is gone")

    reading = StoreReader(read, fresh_wait_s=0.05, first_wait_s=60).reading()
    assert reading is not None and reading.figures is None
    assert reading.error == "OperationalError: the server is gone"


@pytest.mark.docker
def test_after_a_tournament_played_by_workers_the_scrape_equals_the_store(
    client: TestClient,
    api_settings: ApiSettings,
    service_env: dict[str, str],
    workers: Workers,
    ci_settings: CISettings,
    images: dict[str, str],
) -> None:
    """Real workers, CI sandboxes and a scripted model endpoint; then one scrape, compared
    with plain reads of the rows the workers wrote."""
    workers.env = {**service_env, "ARENA_SECRET_KEY": SECRET}
    workers.start("control,llm", 4)
    workers.start("ci", 2)
    with scripted_server([], default=Reply(content="I cannot help with that.")) as endpoint:
        created = client.post("/api/models", headers=ADMIN, json={
            "name": "m1", "base_url": endpoint.url, "model": "x", "api_key": "sk-test",
            "price_input_per_mtok": 2.0, "price_output_per_mtok": 8.0})  # fmt: skip
        assert created.status_code == 201, created.text
        corpus = demo_jsonl(ci_settings.cache_dir, ["demo__py-textkit-slug"])
        imported = client.post("/api/tasks/import", headers=ADMIN,
                               files={"file": ("demo.jsonl", corpus.encode())})  # fmt: skip
        assert imported.status_code == 200, imported.text
        started = client.post("/api/tournaments", headers=ADMIN, json={
            "models": ["m1", "oracle", "null"], "tasks": ["demo__py-textkit-slug"]})  # fmt: skip
        assert started.status_code == 202, started.text
        tournament = started.json()["id"]
        deadline = time.monotonic() + 900
        while (shown := client.get(f"/api/tournaments/{tournament}").json())["status"] != "done":
            assert time.monotonic() < deadline, shown
            time.sleep(1)
    samples = scrape(client)

    with psycopg.connect(api_settings.database_url) as conn:
        matches = Counter(s for (s,) in conn.execute("SELECT status FROM matches"))
        answers = conn.execute(
            "SELECT model, latency_s, prompt_tokens, completion_tokens FROM answers"
        ).fetchall()
        runs = conn.execute("SELECT status, duration_s FROM ci_runs").fetchall()
    assert matches == {"done": 3}
    assert value(samples, "arena_matches_total", status="done") == 3
    assert value(samples, "arena_matches_unfinished", status="running") == 0
    assert value(samples, "arena_tournaments", status="done") == 1
    assert runs, "the workers stored no CI run"
    for status in {s for s, _ in runs}:
        durations = [d for s, d in runs if s == status]
        assert_histogram(samples, "arena_ci_run_duration_seconds", ("status", status), durations,
                         CI_DURATION_BOUNDS_S)  # fmt: skip
    assert {m for m, *_ in answers} == {"m1", "oracle", "null"}
    for model in ("m1", "oracle", "null"):
        mine = [a for a in answers if a[0] == model]
        assert_histogram(samples, "arena_model_call_latency_seconds", ("model", model),
                         [a[1] for a in mine], LATENCY_BOUNDS_S)  # fmt: skip
        assert value(samples, "arena_model_tokens_total", model=model, direction="input") == sum(
            a[2] for a in mine
        )
    m1 = [a for a in answers if a[0] == "m1"]
    assert len(m1) == 4 and len(endpoint.requests) == 4  # two matches, two answers each
    expected_cost = sum(a[2] * 2.0 + a[3] * 8.0 for a in m1) / 1e6
    assert value(samples, "arena_model_cost_usd_total", model="m1") == pytest.approx(expected_cost)
    assert expected_cost > 0
    assert {q for (n, labels) in samples if n == "arena_queue_depth" for _, q in labels} == {
        "control",
        "llm",
        "ci",
    }
