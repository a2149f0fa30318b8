"""Live event streams under anonymous load: caps per client address and in total (429 with
Retry-After), keep-alive comments, the close of an idle stream, streams that end when their
client goes and hold no database connection while they wait, and GET /api/models still fast
with the cap's worth of streams open. uvicorn on 127.0.0.1 with real PostgreSQL and Redis;
clients connect from several loopback addresses (127.0.0.x) to be several clients."""

from __future__ import annotations

import socket
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import httpx
import pytest
from fastapi import FastAPI

from api.core.config import ApiSettings
from api.deps import Services
from api.main import create_app
from api.routes import tournaments
from arena.store.models import list_models
from arena.store.pool import open_pool
from arena.store.tournaments import cancel_tournament, create_tournament
from arena.tasks.schema import Task
from ci_runner import CISettings
from ci_runner.pipeline import Pipeline, ReportFormat, ReportSpec, Step
from tests.api.live import serving


def _task() -> Task:
    return Task(
        instance_id="py-streams-1",
        repo="/nonexistent/repo",
        base_commit="0123456789abcdef" * 2 + "01234567",
        language="python",
        problem_statement="a bug",
        patch="diff --git a/x b/x\n",
        test_patch="diff --git a/t b/t\n",
        pipeline=Pipeline(
            steps=(Step(name="test", run="pytest --junitxml=report.xml"),),
            report=ReportSpec(format=ReportFormat.JUNIT, path="report.xml"),
        ),
    )


def _running_tournament(settings: ApiSettings) -> int:
    """A tournament whose matches wait for workers that never come: its stream never ends."""
    pool = open_pool(settings.database_url, max_size=1)
    try:
        specs = {r.name: r.spec for r in list_models(pool, False)}
        return create_tournament(
            pool, {m: specs[m] for m in ("oracle", "null")}, [_task()], "streams"
        )
    finally:
        pool.close()


class Stream:
    """One raw HTTP/1.1 request held open from a chosen source address."""

    def __init__(self, url: str, path: str, source: str = "127.0.0.1") -> None:
        host, port = url.removeprefix("http://").split(":")
        self.sock = socket.create_connection(
            (host, int(port)), timeout=10, source_address=(source, 0)
        )
        self.sock.sendall(
            f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n"
            "Connection: close\r\n\r\n".encode()
        )
        self.data = b""
        while b"\r\n\r\n" not in self.data:
            self._recv()
        head = self.data.split(b"\r\n\r\n", 1)[0].decode()
        status_line, *lines = head.split("\r\n")
        self.status = int(status_line.split()[1])
        self.headers = {k.lower(): v.strip() for k, v in (h.split(":", 1) for h in lines)}

    def _recv(self) -> bool:
        chunk = self.sock.recv(65536)
        self.data += chunk
        return bool(chunk)

    def read_until(self, marker: bytes, timeout: float) -> float:
        """Seconds until `marker` arrived (AssertionError when it did not in time)."""
        started = time.monotonic()
        self.sock.settimeout(timeout)
        while marker not in self.data:
            if not self._recv():
                raise AssertionError(f"closed before {marker!r}: {self.data[-500:]!r}")
        return time.monotonic() - started

    def read_to_end(self, timeout: float) -> float:
        started = time.monotonic()
        self.sock.settimeout(timeout)
        while self._recv():
            pass
        return time.monotonic() - started

    def close(self) -> None:
        self.sock.close()


@contextmanager
def _served(
    api_settings: ApiSettings, ci_settings: CISettings, **streams: float
) -> Iterator[tuple[str, FastAPI]]:
    app = create_app(api_settings.model_copy(update=streams), ci_settings)
    with serving(app) as url:
        yield url, app


def _services(app: FastAPI) -> Services:
    found: Services = app.state.services
    return found


def _eventually(check: Callable[[], bool], within: float = 10) -> None:
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, "not within the time allowed"
        time.sleep(0.05)


def test_streams_beyond_the_client_cap_or_the_total_cap_get_429_with_retry_after(
    api_settings: ApiSettings, ci_settings: CISettings
) -> None:
    caps = {"streams_per_client": 3, "streams_total": 5, "stream_retry_after_s": 7}
    with _served(api_settings, ci_settings, **caps) as (url, app):
        path = f"/api/tournaments/{_running_tournament(api_settings)}/events"
        streams = _services(app).streams
        mine = [Stream(url, path) for _ in range(3)]
        assert [s.status for s in mine] == [200, 200, 200]
        extra = Stream(url, path)
        assert extra.status == 429 and extra.headers["retry-after"] == "7"
        extra.read_to_end(5)
        assert b"3 live streams are open from this address" in extra.data
        others = [Stream(url, path, "127.0.0.2") for _ in range(2)]
        assert [s.status for s in others] == [200, 200] and streams.total == 5
        third = Stream(url, path, "127.0.0.3")  # under its own cap, over the total
        assert third.status == 429 and third.headers["retry-after"] == "7"
        third.read_to_end(5)
        assert b"the server holds its 5 live streams" in third.data

        mine.pop().close()  # a client that goes gives its slot back
        _eventually(lambda: streams.total == 4)
        again = Stream(url, path, "127.0.0.3")
        assert again.status == 200
        for s in [*mine, *others, again]:
            s.close()
        _eventually(lambda: streams.total == 0)  # every stream ended with its client


def test_the_cap_s_worth_of_streams_leaves_get_models_fast(
    api_settings: ApiSettings, ci_settings: CISettings
) -> None:
    """1,500 anonymous streams asked for at the default caps, each for the fastest look allowed
    (poll_s=0.2): the cap's worth is served, the rest refused, and GET /api/models stays fast."""
    per_client = ApiSettings.model_fields["streams_per_client"].default
    total = ApiSettings.model_fields["streams_total"].default
    with _served(api_settings, ci_settings) as (url, app):
        path = f"/api/tournaments/{_running_tournament(api_settings)}/events?poll_s=0.2"
        with httpx.Client(base_url=url) as api:

            def median_ms(n: int = 60) -> float:
                took = []
                for _ in range(n):
                    started = time.perf_counter()
                    assert api.get("/api/models").status_code == 200
                    took.append((time.perf_counter() - started) * 1000)
                return statistics.median(took)

            alone = median_ms()
            opened, refused = [], 0
            try:
                for i in range(1500):
                    stream = Stream(url, path, f"127.0.1.{2 + i // per_client}")
                    if stream.status == 429:
                        refused += 1
                        stream.close()
                    else:
                        opened.append(stream)
                assert len(opened) == total and refused == 1500 - total
                assert all(s.status == 200 for s in opened)
                assert _services(app).streams.total == total
                assert _services(app).progress_polls.looking == 1
                time.sleep(1)  # every stream following
                loaded = median_ms()
            finally:
                for s in opened:
                    s.close()
    print(
        f"\nGET /api/models median: {alone:.1f} ms alone, {loaded:.1f} ms with {total} streams"
        f" open ({refused} refused)"
    )
    assert loaded < 200


def test_keep_alive_comments_arrive_and_an_idle_stream_is_closed_after_the_timeout(
    api_settings: ApiSettings, ci_settings: CISettings
) -> None:
    timing = {"stream_keepalive_s": 0.3, "stream_idle_s": 2.0}
    with _served(api_settings, ci_settings, **timing) as (url, app):
        path = f"/api/tournaments/{_running_tournament(api_settings)}/events?poll_s=0.2"
        started = time.monotonic()
        stream = Stream(url, path)
        assert stream.status == 200
        stream.read_until(b"event: progress", 5)
        stream.read_until(b": ping", 2)  # a comment: EventSource clients ignore it
        closed = stream.read_to_end(10)  # nothing changes: the stream goes idle
        lasted = time.monotonic() - started
        stream.close()
        assert stream.data.count(b": ping") >= 3, stream.data
        assert b"event: idle" in stream.data and b"no event for 2 s" in stream.data
        assert b"event: end" not in stream.data
        assert 1.9 < lasted < 6, (lasted, closed)
        _eventually(lambda: _services(app).streams.total == 0)
        _eventually(lambda: _services(app).progress_polls.looking == 0)


def test_streams_share_one_look_hold_no_connection_while_waiting_and_end_with_their_client(
    api_settings: ApiSettings, ci_settings: CISettings
) -> None:
    with _served(api_settings, ci_settings) as (url, app):
        services = _services(app)
        tournament = _running_tournament(api_settings)
        opened = [
            Stream(url, f"/api/tournaments/{tournament}/events?poll_s=30", f"127.0.0.{2 + i}")
            for i in range(20)
        ]
        for s in opened:
            s.read_until(b"event: progress", 5)
        assert services.streams.total == 20 and services.progress_polls.looking == 1
        time.sleep(1)  # every stream waiting for the next look, 30 s away
        stats = services.pool.get_stats()
        assert stats["pool_size"] - stats["pool_available"] == 0, stats  # none held
        for s in opened:
            s.close()
        _eventually(lambda: services.streams.total == 0)
        _eventually(lambda: services.progress_polls.looking == 0)  # nobody follows: no look


def test_one_look_feeds_every_stream_of_a_tournament_until_its_end(
    api_settings: ApiSettings, ci_settings: CISettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[int] = []
    read = tournaments._get
    monkeypatch.setattr(tournaments, "_get", lambda s, t: reads.append(t) or read(s, t))
    with _served(api_settings, ci_settings) as (url, app):
        tournament = _running_tournament(api_settings)
        path = f"/api/tournaments/{tournament}/events?poll_s=0.2"
        opened = [Stream(url, path, f"127.0.0.{2 + i}") for i in range(20)]
        for s in opened:
            s.read_until(b"event: progress", 5)
        reads.clear()
        time.sleep(2)
        assert len(reads) <= 2 / 0.2 + 2, len(reads)  # one look each 0.2 s, not one per stream
        pool = open_pool(api_settings.database_url, max_size=1)
        try:
            cancel_tournament(pool, tournament)
        finally:
            pool.close()
        for s in opened:
            s.read_to_end(5)
            s.close()
            assert b'event: end\r\ndata: {"id":' in s.data and b'"status":"cancelled"' in s.data
        _eventually(lambda: _services(app).progress_polls.looking == 0)
