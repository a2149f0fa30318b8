"""The player interface and what an answer records."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from arena.edits import EditError, ReadFile, answer_to_diff
from arena.tasks.schema import Task
from arena.vocabulary import Role as Role  # the players' name for it too


class ModelError(RuntimeError):
    """The model's own failure (cut off, too slow, unusable answer): scored as no answer."""


class EndpointFault(RuntimeError):
    """Infrastructure, not the model: its endpoint refused the configuration or stayed down past
    the retries. Never scored: the round is retried and, past the budget, the match fails."""

    def __init__(self, model: str, reason: str) -> None:
        super().__init__(f"model {model}'s endpoint is at fault: {reason}")
        self.model = model
        self.reason = reason


@dataclass(frozen=True)
class TaskContext:
    """What a player sees: the task, retrieved repo context, and a way to read base files."""

    task: Task
    context: str
    read_file: ReadFile


class Answer(BaseModel):
    model_config = ConfigDict(frozen=True)

    raw_text: str = ""
    diff: str | None = None
    parse_error: str | None = None
    error: str | None = None
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def failure(self) -> str | None:
        """Why there is no diff, if there is none."""
        return self.error or self.parse_error if self.diff is None else None


def parsed_answer(
    raw_text: str,
    read_file: ReadFile,
    latency_s: float,
    prompt_tokens: int = 0,
    completion_tokens: int = 0,
) -> Answer:
    try:
        diff: str | None = answer_to_diff(raw_text, read_file)
        parse_error = None
    except EditError as exc:
        diff, parse_error = None, str(exc)
    return Answer(
        raw_text=raw_text,
        diff=diff,
        parse_error=parse_error,
        latency_s=latency_s,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
    )


class Player(ABC):
    """Proposes a patch for a task, and tests meant to break another player's patch."""

    name: str

    @abstractmethod
    def propose_patch(self, ctx: TaskContext) -> Answer: ...

    @abstractmethod
    def propose_tests(self, ctx: TaskContext, patch: str | None) -> Answer: ...
