"""The service's adaptive tournaments on the engine's rules: newcomers, money, decisions."""

from __future__ import annotations

import numpy as np

from arena.ratings.adaptive_state import Book, decide, standing
from arena.ratings.pairing import Scheduled, posterior, schedule
from arena.ratings.records import MatchResult
from arena.ratings.stopping import (
    Budget,
    Goal,
    MatchCost,
    Stop,
    adjacent_pairs,
    budget_left,
    exhausted,
    placing,
    spent,
    stop_reason,
)
from tests.arena.ratings.test_pairing import _costs, _play, _winner

TRUTH = {"m0": 500.0, "m1": 900.0, "m2": 1300.0, "m3": 1700.0}
TASKS = [f"t{i}" for i in range(60)]


def test_money_is_a_budget_like_tokens() -> None:
    used = spent([MatchCost("m0", "m1", seconds=5.0, tokens=10, money=0.25)] * 4)
    assert used.money == 1.0
    assert exhausted(Budget(money=1.0), used) == "money"
    assert exhausted(Budget(money=1.5), used) is None
    assert budget_left(Budget(money=1.5, tokens=100), used) == {"tokens": 60, "money": 0.5}
    assert schedule(("m0", "m1"), ["t0", "t1"], [], Goal(), Budget(money=1.0), used) == []


def test_a_newcomer_is_placed_by_its_own_matches_only() -> None:
    goal = Goal(target_width=250)
    board = _play(TRUTH, TASKS, goal, Budget(matches=6), seed=4)  # stopped on its budget
    old = tuple(TRUTH)
    before = adjacent_pairs(posterior(old, board).intervals(), goal)
    assert stop_reason(before, Budget(), spent(_costs(board))) is None  # some still open
    truth = {**TRUTH, "new": 1100.0}  # between m1 and m2
    models = (*old, "new")
    rng = np.random.default_rng(4)
    played: list[MatchResult] = []
    while picks := schedule(
        models, TASKS, board + played, goal, Budget(), spent([]), newcomers={"new"}, seed=4
    ):
        for p in picks:
            played.append(MatchResult(p.task, p.a, p.b, _winner(truth, p.a, p.b, rng)))
    assert played and all("new" in (m.a, m.b) for m in played)
    pairs = placing(adjacent_pairs(posterior(models, board + played).intervals(), goal), {"new"})
    assert pairs and all(p.resolved for p in pairs)
    assert {p.upper.model for p in pairs} | {p.lower.model for p in pairs} == {"m1", "new", "m2"}
    # without newcomers the same board would go back to its own open pairs too
    again = schedule(models, TASKS, board, goal, Budget(), spent([]), slots=6, seed=4)
    assert any("new" not in (p.a, p.b) for p in again)


def _book(**changes: object) -> Book:
    base = Book(
        models=("m0", "m1", "m2"),
        tasks=("t0",),
        results=(),
        failed=(),
        in_flight=(),
        costs=(),
        goal=Goal(),
        budget=Budget(),
    )
    return Book(**{**base.__dict__, **changes})  # type: ignore[arg-type]


def test_decide_fills_the_free_slots_then_waits_for_those_in_flight_before_stopping() -> None:
    first = decide(_book(), slots=2, seed=0)
    assert len(first.picks) == 2 and first.stop is None
    flying = tuple(Scheduled(p.task, p.a, p.b) for p in first.picks)
    full = decide(_book(in_flight=flying), slots=2, seed=0)
    assert full.picks == () and full.stop is None  # slots full: nothing more, no stop
    pairs = {frozenset(x) for x in (("m0", "m1"), ("m0", "m2"), ("m1", "m2"))}
    (rest,) = pairs - {frozenset((s.a, s.b)) for s in flying}
    last = Scheduled("t0", *sorted(rest))
    waiting = decide(_book(in_flight=(*flying, last)), slots=3, seed=0)
    assert waiting == decide(_book(in_flight=(*flying, last)), slots=5, seed=0)
    assert waiting.picks == () and waiting.stop is None
    played = tuple(MatchResult(s.task, s.a, s.b, "tie") for s in (*flying, last))
    costs = tuple(MatchCost(s.a, s.b) for s in (*flying, last))
    assert decide(_book(results=played, costs=costs), 2, 0).stop is Stop.EXHAUSTED
    spent_all = _book(budget=Budget(matches=1), costs=(MatchCost("m0", "m1"),))
    assert decide(spent_all, 2, 0).stop is Stop.BUDGET
    shown = standing(_book(in_flight=flying, budget=Budget(matches=5)))
    assert shown.left == {"matches": 3} and shown.widest is not None and shown.to_finish > 0
