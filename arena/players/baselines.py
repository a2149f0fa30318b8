"""Deterministic offline baseline agents: oracle, null and partial."""

from __future__ import annotations

from arena.hunks import (
    FilePatch,
    first_added_block,
    join_diff,
    keep_first_hunks,
    split_diff,
)
from arena.players.base import Answer, Player, TaskContext


def _diff_answer(diff: str) -> Answer:
    return (
        Answer(raw_text=diff, diff=diff)
        if diff.strip()
        else Answer(parse_error="nothing to answer")
    )


class OraclePlayer(Player):
    """Answers the gold patch and the gold tests: the ceiling every model is measured against."""

    name = "oracle"

    def propose_patch(self, ctx: TaskContext) -> Answer:
        return _diff_answer(ctx.task.patch)

    def propose_tests(self, ctx: TaskContext, patch: str | None) -> Answer:
        return _diff_answer(ctx.task.test_patch)


class NullPlayer(Player):
    """Answers nothing: the floor."""

    name = "null"

    def propose_patch(self, ctx: TaskContext) -> Answer:
        return Answer(parse_error="the answer is empty")

    def propose_tests(self, ctx: TaskContext, patch: str | None) -> Answer:
        return Answer(parse_error="the answer is empty")


def partial_patch(gold: str) -> str:
    """The gold patch with its later half of hunks dropped: it applies but fixes only part."""
    hunks = sum(len(f.hunks) for f in split_diff(gold))
    if hunks < 2:
        return ""
    return keep_first_hunks(gold, hunks // 2)


def partial_tests(gold_tests: str) -> str:
    """The gold tests with each hunk cut to its first added block: they check part of the fix."""
    files = [
        FilePatch(f.header, tuple(first_added_block(h) for h in f.hunks))
        for f in split_diff(gold_tests)
    ]
    return join_diff(files)


class PartialPlayer(Player):
    """A plausible but incomplete fix, and tests that check only part of the issue."""

    name = "partial"

    def propose_patch(self, ctx: TaskContext) -> Answer:
        return _diff_answer(partial_patch(ctx.task.patch))

    def propose_tests(self, ctx: TaskContext, patch: str | None) -> Answer:
        return _diff_answer(partial_tests(ctx.task.test_patch))


BASELINES: dict[str, type[Player]] = {p.name: p for p in (OraclePlayer, NullPlayer, PartialPlayer)}
