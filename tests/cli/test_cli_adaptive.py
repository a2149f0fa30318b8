"""The adaptive tournament's driver, with a stand-in for playing a match (no Docker)."""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np
from typer.testing import CliRunner

from arena.match import MatchFailure, MatchRecord
from arena.ratings.pairing import Scheduled
from arena.ratings.stopping import Budget, Goal, Stop
from cli.adaptive import Status, run_adaptive
from cli.app import app

TRUTH = {"oracle": 1400.0, "partial": 1000.0, "null": 600.0, "flaky": 1000.0}


def _player(
    seed: int, broken: str = ""
) -> Callable[[Scheduled], MatchRecord | MatchFailure | None]:
    rng = np.random.default_rng(seed)
    lock = threading.Lock()

    def play(match: Scheduled) -> MatchRecord | MatchFailure | None:
        if match.task == "unpreparable":
            return None
        if broken in (match.a, match.b):
            return MatchFailure(task=match.task, language="python", a=match.a, b=match.b,
                                reason="endpoint down", at_fault=broken)  # fmt: skip
        p = 1 / (1 + 10 ** ((TRUTH[match.b] - TRUTH[match.a]) / 400))
        with lock:
            a_wins = rng.random() < p
        winner = match.a if a_wins else match.b
        score = {match.a: 2 if a_wins else 0, match.b: 0 if a_wins else 2}
        return MatchRecord(task=match.task, language="python", a=match.a, b=match.b,
                           rounds=(), score=score, result=winner, duration_s=3.0)  # fmt: skip

    return play


def test_stops_at_the_match_budget_and_shows_the_criterion_and_what_is_left() -> None:
    seen: list[Status] = []
    tasks = [f"t{i}" for i in range(30)]
    run = run_adaptive(
        ["oracle", "partial", "null"], tasks, _player(0), Goal(target_width=10),
        Budget(matches=12), jobs=3, on_status=seen.append,
    )  # fmt: skip
    assert len(run.records) == 12 and run.stop is Stop.BUDGET
    keys = {(r.task, *sorted((r.a, r.b))) for r in run.records}
    assert len(keys) == 12  # never a (pair, task) twice, even three at a time
    last = seen[-1]
    assert last.left == {"matches": 0} and last.used.seconds == 36.0
    assert last.widest is not None and last.widest > 10 and last.to_finish > 0
    assert "widest open interval" in last.line() and "matches left 0" in last.line()


def test_reaches_the_goal_skips_unpreparable_tasks_and_never_retries_failed_matches() -> None:
    tasks = ["unpreparable", *(f"t{i}" for i in range(40))]
    run = run_adaptive(
        ["oracle", "partial", "null", "flaky"], tasks, _player(1, broken="flaky"),
        Goal(target_width=400), Budget(seconds=600.0), jobs=2,
    )  # fmt: skip
    assert run.skipped_tasks == ["unpreparable"]
    failed = [(f.task, *sorted((f.a, f.b))) for f in run.failures]
    assert len(failed) == len(set(failed)) > 0
    assert run.stop in (Stop.GOAL, Stop.BUDGET, Stop.EXHAUSTED)
    assert run.status.used.seconds <= 600.0 + 2 * 3.0  # at most the matches in flight over


def test_budgets_without_adaptive_mode_are_refused() -> None:
    done = CliRunner().invoke(app, ["tournament", "--models", "a,b", "--max-matches", "3"])
    assert done.exit_code == 2
