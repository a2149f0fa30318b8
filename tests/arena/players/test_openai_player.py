"""The OpenAI-compatible player against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import socket
import time
import tracemalloc

import pytest

from arena.players.base import EndpointFault, Role, TaskContext
from arena.players.openai import OpenAIModel, OpenAIPlayer
from arena.players.registry import ModelsFileError, build_player, load_models_file
from arena.scrub import KnownSecrets
from arena.settings import PlayerSettings
from arena.store.settings import ServiceSettings
from tests.arena.scripted_server import Reply, scripted_server
from tests.arena.tiny import TINY_TASK

FILES = {"calc.py": "def add(a, b):\n    return a - b\n"}
TASK = TINY_TASK
CTX = TaskContext(TASK, "### calc.py\n" + FILES["calc.py"], FILES.get)
FIX = "calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n"


def _player(url: str, cap: int = 4 << 20, **overrides: object) -> OpenAIPlayer:
    fields = {
        "name": "m",
        "base_url": url,
        "model": "test-model",
        "backoff_s": 0.05,
        "max_retries": 3,
    }
    spec = OpenAIModel.model_validate({**fields, **overrides})
    return OpenAIPlayer(spec, api_key="sk-test", max_answer_bytes=cap)


def test_a_429_is_retried_then_the_answer_is_parsed() -> None:
    script = [
        Reply(status=429, body='{"error": "slow down"}', headers={"Retry-After": "0.1"}),
        Reply(content=FIX),
    ]
    with scripted_server(script) as server:
        answer = _player(server.url).propose_patch(CTX)
    assert answer.error is None and answer.parse_error is None
    assert answer.diff is not None and "+    return a + b" in answer.diff
    assert (answer.prompt_tokens, answer.completion_tokens) == (120, 30)
    assert len(server.requests) == 2 and answer.latency_s >= 0.1
    request = server.requests[-1]
    assert request["path"] == "/v1/chat/completions" and request["model"] == "test-model"
    assert "add() subtracts" in request["messages"][-1]["content"]
    assert server.auth[-1] == "Bearer sk-test"


def test_a_500_storm_that_outlasts_the_retries_is_the_endpoints_fault() -> None:
    with scripted_server([], default=Reply(status=500, body='{"error": "boom"}')) as server:
        player = _player(server.url, max_retries=2)
        with pytest.raises(EndpointFault, match=r"gave up after 3 attempts.*HTTP 500") as fault:
            player.propose_patch(CTX)
    assert fault.value.model == "m" and "endpoint is at fault" in str(fault.value)
    assert len(server.requests) == 3


def test_a_slow_answer_past_the_timeout_is_the_models_failure() -> None:
    with scripted_server([], default=Reply(content=FIX, delay_s=3)) as server:
        started = time.monotonic()
        answer = _player(server.url, timeout_s=0.5, max_retries=1).propose_tests(CTX, None)
    assert answer.diff is None
    assert answer.error is not None and "no answer within its timeout of 0.5s" in answer.error
    assert time.monotonic() - started < 3 and len(server.requests) == 1


@pytest.mark.parametrize("head", [True, False], ids=["head-drips", "body-drips"])
def test_a_slow_drip_answer_ends_at_its_total_deadline_as_the_models_failure(head: bool) -> None:
    """One byte every 0.3s would hold the call for minutes: each read is quick, the whole is not."""
    drip = Reply(content=FIX, drip_s=0.3, drip_head=head)
    with scripted_server([], default=drip) as server:
        started = time.monotonic()
        answer = _player(server.url, timeout_s=2, max_retries=3).propose_patch(CTX)
        took = time.monotonic() - started
    assert 2 <= took < 2.8, took
    assert answer.diff is None and answer.raw_text == ""
    assert answer.error == "model m: no answer within its timeout of 2s"
    assert len(server.requests) == 1  # the model's fault: not retried, never the endpoint's


@pytest.mark.parametrize("announced", [True, False], ids=["content-length", "streamed"])
def test_an_answer_past_the_size_cap_is_refused_unread_as_the_models_failure(
    announced: bool,
) -> None:
    huge = Reply(answer_bytes=200 << 20, send_length=announced)  # 200 MiB
    with scripted_server([huge]) as server:
        tracemalloc.start()
        started = time.monotonic()
        try:
            answer = _player(server.url, cap=1 << 20).propose_patch(CTX)
            took = time.monotonic() - started
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert took < 5 and peak < 16 << 20, (took, peak)
    assert answer.diff is None and answer.raw_text == "" and answer.failure is not None
    assert answer.failure.startswith(
        "model m: the answer is larger than the cap of 1048576 bytes (ARENA_MAX_ANSWER_BYTES)"
    )
    assert len(server.requests) == 1


def test_a_huge_refusal_is_read_only_for_its_message() -> None:
    with (
        scripted_server([Reply(status=503, answer_bytes=200 << 20)]) as server,
        pytest.raises(EndpointFault, match=r"gave up after 1 attempts; last: HTTP 503: \{"),
    ):
        _player(server.url, cap=1 << 20, max_retries=0).propose_patch(CTX)


def test_the_cap_is_a_setting_read_once_and_passed_to_players(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert PlayerSettings().max_answer_bytes == ServiceSettings().max_answer_bytes == 4 << 20
    monkeypatch.setenv("ARENA_MAX_ANSWER_BYTES", "1000")
    assert PlayerSettings().max_answer_bytes == ServiceSettings().max_answer_bytes == 1000
    spec = OpenAIModel(name="m", base_url="http://127.0.0.1:9/v1", model="x")
    with scripted_server([Reply(content="x" * 2000)]) as server:
        player = build_player(
            "m", {"m": spec.model_copy(update={"base_url": server.url})}, {}, 1000
        )
        answer = player.propose_patch(CTX)
    assert answer.failure is not None and "cap of 1000 bytes" in answer.failure


def test_an_answer_cut_off_at_the_token_limit_is_a_failure_not_a_partial_patch() -> None:
    with scripted_server([Reply(content=FIX, finish_reason="length")]) as server:
        answer = _player(server.url, max_tokens=64).propose_patch(CTX)
    assert answer.diff is None and answer.failure is not None
    assert "cut off at the token limit" in answer.failure and "max_tokens=64" in answer.failure


def test_garbage_is_a_parse_error_and_a_broken_body_the_endpoints_fault() -> None:
    with scripted_server([Reply(content="Sure! Just flip the minus sign.")]) as server:
        answer = _player(server.url).propose_patch(CTX)
    assert answer.diff is None and answer.error is None
    assert answer.parse_error is not None and "neither a unified diff" in answer.parse_error
    assert answer.raw_text == "Sure! Just flip the minus sign."
    with (
        scripted_server([], default=Reply(body="<html>bad gateway</html>")) as server,
        pytest.raises(EndpointFault, match="malformed response"),
    ):
        _player(server.url, max_retries=1).propose_patch(CTX)
    assert len(server.requests) == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_a_refused_configuration_is_the_endpoints_fault_and_not_retried(status: int) -> None:
    with (
        scripted_server([Reply(status=status, body='{"error": "no"}')]) as server,
        pytest.raises(EndpointFault, match=f"refused the request: HTTP {status}"),
    ):
        _player(server.url).propose_patch(CTX)
    assert len(server.requests) == 1


def test_connection_refused_is_the_endpoints_fault() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(EndpointFault, match="cannot connect"):
        _player(f"http://127.0.0.1:{port}/v1").propose_patch(CTX)


def test_reviewer_prompt_shows_the_patch() -> None:
    with scripted_server([Reply(content=FIX)]) as server:
        _player(server.url).propose_tests(CTX, "diff --git a/calc.py b/calc.py\n+MARKER\n")
    assert "+MARKER" in server.requests[0]["messages"][-1]["content"]
    assert Role.REVIEWER.value == "reviewer"


def test_models_file_defines_models_and_names_its_errors(tmp_path) -> None:  # type: ignore[no-untyped-def]
    good = tmp_path / "models.yaml"
    good.write_text(
        "models:\n  - name: local\n    base_url: http://127.0.0.1:1/v1\n    model: m\n    api_key_env: ARENA_TEST_KEY\n"
    )
    models = load_models_file(good)
    assert build_player("local", models, {"ARENA_TEST_KEY": "k"}).name == "local"
    with pytest.raises(ModelsFileError, match="ARENA_TEST_KEY is not set"):
        build_player("local", models, {})
    with pytest.raises(ModelsFileError, match="unknown model 'nope'"):
        build_player("nope", models, {})
    toml = tmp_path / "models.toml"
    toml.write_text('[[models]]\nname = "t"\nbase_url = "http://x"\n')
    with pytest.raises(ModelsFileError, match="model #1: model: Field required"):
        load_models_file(toml)


ECHOED = "sk-ECHOED-4b1d-the-endpoint-sends-it-back"


@pytest.mark.parametrize(
    "reply",
    [
        Reply(status=401, body='{"error": "bad key: <<Authorization>>"}'),
        Reply(status=500, body=" " * 175 + '{"echo": "<<Authorization>>"}'),  # across the cut
        Reply(body='{"not": "a completion", "auth": "<<Authorization>>"}'),
    ],
    ids=["refused", "failing-past-the-retries", "malformed"],
)
def test_an_endpoint_echoing_the_key_in_an_error_never_puts_it_in_the_fault(reply: Reply) -> None:
    """Scrubbed as the body is read, before it is cut to 200 characters for the message."""
    with scripted_server([], default=reply) as server:
        spec = OpenAIModel(name="m", base_url=server.url, model="x", max_retries=1, backoff_s=0.01)
        with pytest.raises(EndpointFault) as fault:
            OpenAIPlayer(spec, api_key=ECHOED).propose_patch(CTX)
    assert server.auth[0] == f"Bearer {ECHOED}"  # it was sent, and came back
    assert ECHOED not in str(fault.value) and "[redact" in str(fault.value)
    assert "sk-ECHO" not in str(fault.value)  # not even a half cut at the 200th character


def test_an_answer_echoing_the_key_or_a_service_secret_is_scrubbed_before_it_is_parsed() -> None:
    known = KnownSecrets(["the-service-secret-key"])
    content = FIX + "\n<<Authorization>> and the-service-secret-key"
    with scripted_server([Reply(content=content)]) as server:
        spec = OpenAIModel(name="m", base_url=server.url, model="x")
        answer = OpenAIPlayer(spec, api_key=ECHOED, secrets=known).propose_patch(CTX)
    assert answer.diff is not None and "+    return a + b" in answer.diff
    assert answer.raw_text.endswith("Bearer [redacted] and [redacted]")
    assert known.scrub(ECHOED) == "[redacted]"  # the process now knows the player's key


@pytest.mark.parametrize(
    ("usage", "why"),
    [
        ('{"prompt_tokens": -8000000000, "completion_tokens": 30}', "usage.prompt_tokens = -8000000000 is out of range"),
        ('{"prompt_tokens": 120, "completion_tokens": 2000000000}', "usage.completion_tokens = 2000000000 is out of range"),
        ('{"prompt_tokens": 1000000000000, "completion_tokens": 1}', "usage.prompt_tokens = 1000000000000 is out of range"),
        ('{"prompt_tokens": NaN, "completion_tokens": 1}', "usage.prompt_tokens is not a whole number: 'nan'"),
        ('{"prompt_tokens": 12.5, "completion_tokens": 1}', "not a whole number"),
        ('{"prompt_tokens": "120", "completion_tokens": 1}', "not a whole number: '120'"),
        ('{"prompt_tokens": 1e400, "completion_tokens": 1}', "not a whole number: 'inf'"),
    ],
)  # fmt: skip
def test_usage_no_request_could_have_used_is_the_models_failure(usage: str, why: str) -> None:
    """Budgets and listings add usage up: what is read is checked where it is read."""
    with scripted_server([Reply(content=FIX, usage=usage)]) as server:
        answer = _player(server.url, max_tokens=4096).propose_patch(CTX)
    assert answer.diff is None and answer.failure is not None, answer
    assert why in answer.failure and "model m:" in answer.failure
    assert (answer.prompt_tokens, answer.completion_tokens) == (0, 0)


def test_usage_within_what_the_request_allows_is_kept_and_missing_fields_count_zero() -> None:
    usage = '{"prompt_tokens": 300.0, "total_tokens": 300}'  # a float that is whole is a count
    with scripted_server([Reply(content=FIX, usage=usage)]) as server:
        answer = _player(server.url, max_tokens=4096).propose_patch(CTX)
    assert answer.error is None and answer.diff is not None
    assert (answer.prompt_tokens, answer.completion_tokens) == (300, 0)
