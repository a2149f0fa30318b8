"""The endpoint check of a model: off the request threads, bounded, one URL, failures in a word."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import httpx
import pytest
from fastapi.testclient import TestClient

from api.core.config import ApiSettings
from api.endpoint_check import EndpointChecks
from api.errors import ApiError
from api.main import create_app
from arena.players.key_env import KeyEnvRule
from arena.scrub import KnownSecrets
from ci_runner import CISettings
from tests.api.conftest import ADMIN
from tests.api.live import serving
from tests.arena.scripted_server import Reply, scripted_server


def _model(name: str, base_url: str, **extra: object) -> dict[str, object]:
    return {"name": name, "base_url": base_url, "model": "x", **extra}


def _checks(concurrency: int) -> EndpointChecks:
    """Checks as the API makes them, with an environment holding no key."""
    return EndpointChecks(concurrency, KeyEnvRule(), {}, KnownSecrets())


def test_45_checks_of_a_slow_endpoint_leave_other_requests_fast(
    api_settings: ApiSettings, ci_settings: CISettings
) -> None:
    """Each check waits 1.5s for its answer: were a check a request thread's (40 of them), the
    list below would wait behind them."""
    assert api_settings.check_concurrency == 8
    slow = Reply(content="OK", delay_s=1.5)
    with (
        scripted_server([], default=slow) as endpoint,
        serving(create_app(api_settings, ci_settings)) as url,
    ):
        limits = httpx.Limits(max_connections=64)  # one client: building 45 takes a second
        with httpx.Client(timeout=120, limits=limits) as http, ThreadPoolExecutor(45) as pool:

            def register(n: int) -> int:
                return http.post(
                    f"{url}/api/models",
                    params={"check": True},
                    json=_model(f"slow-{n}", endpoint.url),
                    headers=ADMIN,
                ).status_code

            assert http.get(f"{url}/api/models").status_code == 200
            registered = [pool.submit(register, n) for n in range(45)]
            slowest, reads = 0.0, 0
            while not all(r.done() for r in registered):
                started = time.monotonic()
                assert http.get(f"{url}/api/models").status_code == 200
                slowest, reads = max(slowest, time.monotonic() - started), reads + 1
                time.sleep(0.1)
            assert [r.result() for r in registered] == [201] * 45
            names = {m["name"] for m in http.get(f"{url}/api/models").json()["models"]}
    assert {f"slow-{n}" for n in range(45)} <= names
    assert reads >= 20 and slowest < 1.0, (reads, slowest)
    assert len(endpoint.requests) == 45 and endpoint.most_busy <= 8


def test_a_redirecting_endpoint_is_not_followed_and_the_check_says_so(client: TestClient) -> None:
    with scripted_server([], default=Reply(content="OK")) as elsewhere:
        away = {"Location": elsewhere.url + "/chat/completions"}
        with scripted_server([], default=Reply(status=307, body="{}", headers=away)) as endpoint:
            created = client.post("/api/models", params={"check": True},
                                  json=_model("m1", endpoint.url), headers=ADMIN)  # fmt: skip
            assert client.post("/api/models", json=_model("m2", elsewhere.url),
                               headers=ADMIN).status_code == 201  # fmt: skip
            patched = client.patch("/api/models/m2", params={"check": True},
                                   json={"base_url": endpoint.url}, headers=ADMIN)  # fmt: skip
    said = f"http://127.0.0.1:{httpx.URL(endpoint.url).port}"
    for refused in (created, patched):
        assert refused.status_code == 422, refused.text
        assert refused.json()["detail"][0] == {
            "loc": ["query", "check"],
            "msg": f"the endpoint check failed: {said} answered with a redirect (HTTP 307),"
            " which is not followed: register the URL it leads to",
            "type": "check_failed",
        }
        assert str(httpx.URL(elsewhere.url).port) not in refused.text
    assert len(endpoint.requests) == 2 and elsewhere.requests == []
    assert client.get("/api/models/m1").status_code == 404
    assert client.get("/api/models/m2").json()["base_url"] == elsewhere.url


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def _silent() -> Iterator[str]:
    """Connections are taken (the kernel's backlog) and never answered."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


@contextmanager
def _not_http() -> Iterator[str]:
    """What a Redis server says to an HTTP request, then the connection closes."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)

        def answer() -> None:
            conn, _ = sock.accept()
            with conn:
                conn.recv(65536)
                conn.sendall(b"-ERR unknown command 'POST', internal 10.9.8.7\r\n")

        threading.Thread(target=answer, daemon=True).start()
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


@contextmanager
def _scripted(reply: Reply) -> Iterator[str]:
    with scripted_server([], default=reply) as server:
        yield server.url


@contextmanager
def _url(url: str) -> Iterator[str]:
    yield url


INTERNAL = '{"error": "upstream 10.9.8.7:6379: [Errno 111] Connection refused"}'
CASES = {
    "refused": (lambda: _url(f"http://127.0.0.1:{_free_port()}/v1"), "cannot connect to {at}"),
    "unknown host": (
        lambda: _url("http://no-such-host.invalid:8000/v1"),
        "cannot connect to http://no-such-host.invalid:8000",
    ),
    "silent": (_silent, "{at} sent no whole answer within 1s"),
    "slow drip": (
        lambda: _scripted(Reply(content="OK", drip_s=0.2, drip_head=False)),
        "{at} sent no whole answer within 1s",
    ),
    "not http": (_not_http, "{at} did not answer with HTTP"),
    "failing": (
        lambda: _scripted(Reply(status=500, body=INTERNAL)),
        "{at} is overloaded or failing (HTTP 500): try again later",
    ),
    "bad key": (
        lambda: _scripted(Reply(status=401, body=INTERNAL)),
        "{at} refused the API key (HTTP 401)",
    ),
    "wrong url": (
        lambda: _scripted(Reply(status=404, body=INTERNAL)),
        "{at} has no such chat completions or model (HTTP 404): check base_url, model",
    ),
    "not a completion": (
        lambda: _scripted(Reply(body="<html>10.9.8.7</html>")),
        "{at} answered HTTP 200, but not with a chat completion",
    ),
    "huge": (
        lambda: _scripted(Reply(answer_bytes=50 << 20, send_length=False)),
        "{at} answered with more than 65536 bytes to a tiny request",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_a_failed_check_says_what_failed_in_a_word_without_low_level_text(case: str) -> None:
    endpoint, expected = CASES[case]
    with endpoint() as base_url:
        spec = {"kind": "openai", **_model("m", base_url, timeout_s=1.0)}
        started = time.monotonic()
        with pytest.raises(ApiError) as refused:
            asyncio.run(_checks(2).check(spec, "sk-CANARY"))
        took = time.monotonic() - started
    at = f"http://127.0.0.1:{httpx.URL(base_url).port}"
    assert refused.value.status == 422 and refused.value.loc == ["query", "check"]
    assert refused.value.msg == "the endpoint check failed: " + expected.format(at=at)
    for low_level in ("Errno", "Connection refused", "timed out", "10.9.8.7", "sk-CANARY"):
        assert low_level not in refused.value.msg
    assert took < 3, took  # a 1s deadline; name resolution may take a little more


def test_an_answer_cut_off_at_its_16_tokens_passes_the_check() -> None:
    with scripted_server([Reply(content="O", finish_reason="length")]) as server:
        spec = {"kind": "openai", **_model("m", server.url, timeout_s=5.0)}
        asyncio.run(_checks(1).check(spec, None))
    assert server.requests[0]["max_tokens"] == 16
