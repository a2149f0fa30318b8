"""Who a failed match's fault was (a model's endpoint, or a component), and the loud report of
models at fault that a tournament gives: one implementation for the CLI and the service."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from arena.players.base import EndpointFault
from ci_runner import SandboxError


class FaultComponent(StrEnum):
    """What kept a match from finishing. Never scored: the match is left out of the ratings."""

    MODEL_ENDPOINT = "model_endpoint"  # refused the configuration, or stayed down past retries
    SANDBOX = "sandbox"  # the Docker engine, an image, a CI run stopped from outside
    WORKER = "worker"  # the step's worker died (or was killed) on its last attempt
    INFRASTRUCTURE = "infrastructure"  # anything else in the service: store, queue, a bug


@dataclass(frozen=True)
class Fault:
    """The component at fault; with a model endpoint, the model whose endpoint it was."""

    component: FaultComponent
    model: str | None = None

    def __post_init__(self) -> None:
        if (self.model is not None) != (self.component is FaultComponent.MODEL_ENDPOINT):
            raise ValueError("a model is named exactly when its endpoint is at fault")


class ReferenceRunFailed(SandboxError):
    """The reference run `base + gold` stayed wrong: no round on the task can be judged.
    Infrastructure (the protocol's "failed reference run"), never scored or cached."""


def fault_of(exc: BaseException) -> Fault:
    """Whose fault an exception that stopped a step or a round is."""
    if isinstance(exc, ReferenceRunFailed):
        return Fault(FaultComponent.INFRASTRUCTURE)
    if isinstance(exc, EndpointFault):
        return Fault(FaultComponent.MODEL_ENDPOINT, exc.model)
    if isinstance(exc, SandboxError):
        return Fault(FaultComponent.SANDBOX)
    return Fault(FaultComponent.INFRASTRUCTURE)


class FailedMatch(Protocol):
    """What the report reads of a failed match (`MatchFailure`, a stored failed match)."""

    @property
    def at_fault(self) -> str | None: ...  # the model whose endpoint failed it, if one did

    @property
    def reason(self) -> str: ...


@dataclass(frozen=True)
class ModelAtFault:
    model: str
    matches: int  # how many matches its endpoint failed
    last_reason: str  # why the latest of them failed


def models_at_fault(failures: Sequence[FailedMatch]) -> list[ModelAtFault]:
    """Models whose endpoint failed matches (failures in the order they happened): most matches
    first (a tie: the first to fail first), each with its latest failure's reason. Reported
    loudly, so a dead endpoint is never mistaken for a model that answered nothing."""
    blamed = Counter(f.at_fault for f in failures if f.at_fault)
    return [
        ModelAtFault(
            model, count, next(f.reason for f in reversed(failures) if f.at_fault == model)
        )
        for model, count in blamed.most_common()
    ]
