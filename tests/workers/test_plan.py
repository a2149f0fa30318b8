"""The next steps of a match, from its stored state."""

from __future__ import annotations

from arena.players.base import Answer, Role
from arena.store.matches import MatchState, RoundState
from arena.tasks.schema import Validation
from workers.plan import next_steps


def _match(
    validation: Validation | None, *rounds: RoundState, status: str = "running"
) -> MatchState:
    return MatchState(1, 1, 7, "a", "b", status, validation, rounds)


def _round(idx: int, answered: tuple[Role, ...] = ()) -> RoundState:
    return RoundState(idx, "a", "b", {r: Answer(raw_text="x") for r in answered}, None)


VALID = Validation(valid=True, fail_to_pass=("t",))


def test_validation_comes_first_then_both_rounds_at_once() -> None:
    assert [s.key for s in next_steps(_match(None, _round(0), _round(1)))] == ["prepare:7"]
    both = next_steps(_match(VALID, _round(0), _round(1, (Role.SUBMITTER,))))
    assert [(s.key, s.queue.value) for s in both] == [
        ("answer:1:0:0", "llm"),
        ("answer:1:1:1", "llm"),
    ]
    judged = next_steps(_match(VALID, _round(0, tuple(Role)), _round(1, tuple(Role))))
    assert [(s.key, s.queue.value) for s in judged] == [("round:1:0", "ci"), ("round:1:1", "ci")]


def test_an_invalid_task_finishes_at_once_and_an_ended_match_needs_nothing() -> None:
    invalid = Validation(valid=False, reason="no test fails")
    assert [s.key for s in next_steps(_match(invalid, _round(0), _round(1)))] == ["finish:1"]
    assert next_steps(_match(VALID, _round(0), _round(1), status="cancelled")) == []
