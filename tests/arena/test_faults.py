"""Whose fault a failed match is, and the loud report of models at fault (CLI and service)."""

from __future__ import annotations

import pytest

from arena.faults import Fault, FaultComponent, ModelAtFault, fault_of, models_at_fault
from arena.match import MatchFailure
from arena.players.base import EndpointFault
from arena.players.openai import OpenAIModel, OpenAIPlayer
from ci_runner.errors import ImageError, SandboxError
from tests.arena.players.test_openai_player import CTX
from tests.arena.scripted_server import Reply, scripted_server


def test_an_endpoint_that_refuses_the_configuration_is_its_models_fault() -> None:
    refused = Reply(status=401, body='{"error": {"message": "invalid api key"}}')
    with scripted_server([], default=refused) as server:
        spec = OpenAIModel(name="m1", base_url=server.url, model="x", max_retries=1)
        player = OpenAIPlayer(spec, api_key="sk-wrong")
        with pytest.raises(EndpointFault) as raised:
            player.propose_patch(CTX)
    assert fault_of(raised.value) == Fault(FaultComponent.MODEL_ENDPOINT, "m1")


@pytest.mark.parametrize(
    ("exc", "component"),
    [
        (SandboxError("the engine is gone"), FaultComponent.SANDBOX),
        (ImageError("no image python:3.12"), FaultComponent.SANDBOX),
        (RuntimeError("a bug"), FaultComponent.INFRASTRUCTURE),
        (ConnectionError("the store restarted"), FaultComponent.INFRASTRUCTURE),
    ],
)
def test_every_other_fault_is_a_components_and_names_no_model(
    exc: Exception, component: FaultComponent
) -> None:
    assert fault_of(exc) == Fault(component)


def test_a_model_is_named_exactly_when_its_endpoint_is_at_fault() -> None:
    with pytest.raises(ValueError):
        Fault(FaultComponent.MODEL_ENDPOINT)
    with pytest.raises(ValueError):
        Fault(FaultComponent.SANDBOX, "m1")


def _failed(at_fault: str | None, reason: str) -> MatchFailure:
    return MatchFailure(task="t", language="python", a="x", b="y", reason=reason, at_fault=at_fault)


def test_models_at_fault_most_matches_first_each_with_its_latest_reason() -> None:
    failures = [
        _failed("b", "b: HTTP 401 (1)"),
        _failed(None, "the engine is gone"),
        _failed("a", "a: HTTP 404 (1)"),
        _failed("a", "a: HTTP 404 (2)"),
        _failed("b", "b: HTTP 403 (2)"),
        _failed("c", "c: connection refused"),
        _failed("a", "a: HTTP 400 (3)"),
    ]
    assert models_at_fault(failures) == [
        ModelAtFault("a", 3, "a: HTTP 400 (3)"),
        ModelAtFault("b", 2, "b: HTTP 403 (2)"),
        ModelAtFault("c", 1, "c: connection refused"),
    ]
    assert models_at_fault([_failed(None, "infrastructure")]) == []
    assert models_at_fault([]) == []


def test_models_tied_on_failed_matches_keep_the_order_they_first_failed_in() -> None:
    failures = [_failed("z", "z 1"), _failed("a", "a 1"), _failed("a", "a 2"), _failed("z", "z 2")]
    assert [m.model for m in models_at_fault(failures)] == ["z", "a"]
