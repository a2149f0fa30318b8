"""Pure: from a match's stored state, the steps that move it on (all of them, at once)."""

from __future__ import annotations

from dataclasses import dataclass

from arena.players.base import Role
from arena.store.matches import MatchState
from arena.vocabulary import OPEN_MATCH, Queue


@dataclass(frozen=True)
class Step:
    name: str  # the Celery task
    args: tuple[int, ...]
    queue: Queue

    @property
    def key(self) -> str:
        """The step's row in `steps`: one per task to prepare, answer, round, match."""
        return ":".join([self.name, *(str(a) for a in self.args)])


def prepare_step(task_id: int) -> Step:
    return Step("prepare", (task_id,), Queue.CI)


def answer_step(match_id: int, idx: int, role: Role) -> Step:
    return Step("answer", (match_id, idx, 0 if role is Role.SUBMITTER else 1), Queue.LLM)


def next_steps(match: MatchState) -> list[Step]:
    """Nothing for an ended match; validation first; then both rounds side by side.

    In a round the submitter answers, then the reviewer (who sees the patch), then the CI
    runs and the verdict; once both rounds are judged, the match is finished.
    """
    if match.status not in OPEN_MATCH:
        return []
    if match.validation is None:
        return [prepare_step(match.task_id)]
    if not match.validation.valid:
        return [Step("finish", (match.id,), Queue.CONTROL)]  # finishing skips it
    steps = []
    for played in match.rounds:
        if Role.SUBMITTER not in played.answers:
            steps.append(answer_step(match.id, played.idx, Role.SUBMITTER))
        elif Role.REVIEWER not in played.answers:
            steps.append(answer_step(match.id, played.idx, Role.REVIEWER))
        elif played.record is None:
            steps.append(Step("round", (match.id, played.idx), Queue.CI))
    return steps or [Step("finish", (match.id,), Queue.CONTROL)]
