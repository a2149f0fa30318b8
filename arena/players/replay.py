"""A player that answers from recorded answers, keyed by task and role."""

from __future__ import annotations

import json
from pathlib import Path

from arena.players.base import Answer, Player, Role, TaskContext, parsed_answer


class ReplayError(ValueError):
    """The recordings file is unreadable or malformed."""


class ReplayPlayer(Player):
    """Lines: {"task": instance_id, "role": "submitter"|"reviewer", "answer": raw text}."""

    def __init__(self, name: str, path: Path) -> None:
        self.name = name
        self._answers: dict[tuple[str, Role], str] = {}
        try:
            lines = path.read_text().splitlines()
        except OSError as exc:
            raise ReplayError(f"cannot read recordings {path}: {exc}") from exc
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                key = (str(record["task"]), Role(record["role"]))
                self._answers[key] = str(record["answer"])
            except (json.JSONDecodeError, KeyError, ValueError, TypeError) as exc:
                raise ReplayError(
                    f"{path} line {number}: needs task, role and answer ({exc})"
                ) from exc

    def _answer(self, ctx: TaskContext, role: Role) -> Answer:
        text = self._answers.get((ctx.task.instance_id, role))
        if text is None:
            return Answer(error=f"no recorded {role.value} answer for {ctx.task.instance_id}")
        return parsed_answer(text, ctx.read_file, latency_s=0.0)

    def propose_patch(self, ctx: TaskContext) -> Answer:
        return self._answer(ctx, Role.SUBMITTER)

    def propose_tests(self, ctx: TaskContext, patch: str | None) -> Answer:
        return self._answer(ctx, Role.REVIEWER)
