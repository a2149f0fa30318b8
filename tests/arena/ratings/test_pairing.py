"""Adaptive pairing, stop rules and budgets: pure functions, table in, table out."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.ratings.pairing import (
    Scheduled,
    next_matches,
    posterior,
    schedule,
    task_discrimination,
)
from arena.ratings.records import MatchResult, MatchWinner
from arena.ratings.stopping import (
    Budget,
    Goal,
    Interval,
    MatchCost,
    Stop,
    adjacent_pairs,
    exhausted,
    matches_to_finish,
    spent,
    stop_reason,
    widest_open,
)

MODELS = ("m0", "m1", "m2", "m3")


def _winner(truth: dict[str, float], a: str, b: str, rng: np.random.Generator) -> MatchWinner:
    p = 1 / (1 + 10 ** ((truth[b] - truth[a]) / 400))
    u = rng.random()
    if u < 0.2 * 2 * min(p, 1 - p):
        return "tie"
    return "a" if rng.random() < p else "b"


def _play(
    truth: dict[str, float],
    tasks: list[str],
    goal: Goal,
    budget: Budget,
    seed: int,
    slots: int = 1,
) -> list[MatchResult]:
    """Plays until `schedule` stops, `slots` matches at a time, each batch chosen seeing only
    the results of the batches before it (as the service's matches in flight)."""
    rng = np.random.default_rng(seed)
    models = tuple(truth)
    done: list[MatchResult] = []
    while picks := schedule(
        models, tasks, done, goal, budget, spent(_costs(done)), slots=slots, seed=seed
    ):
        for p in picks:
            done.append(MatchResult(p.task, p.a, p.b, _winner(truth, p.a, p.b, rng)))
    return done


def _costs(done: list[MatchResult]) -> list[MatchCost]:
    return [MatchCost(m.a, m.b, seconds=10.0, tokens=100) for m in done]


def test_never_plays_a_pair_on_a_task_twice_and_stops_when_none_is_left() -> None:
    truth = dict.fromkeys(MODELS[:3], 1000.0)  # equal models: never separated
    tasks = [f"t{i}" for i in range(4)]
    done = _play(truth, tasks, Goal(separate=True), Budget(), seed=1)
    keys = [(m.task, *sorted((m.a, m.b))) for m in done]
    assert len(keys) == len(set(keys)) == 3 * len(tasks)


def test_a_batch_spreads_over_distinct_pairs_and_tasks_and_skips_those_in_flight() -> None:
    tasks = ["t0", "t1"]
    flying = [Scheduled("t0", "m1", "m0")]
    picks = next_matches(MODELS, tasks, [], Goal(target_width=50), 11, flying)
    keys = {(p.task, *sorted((p.a, p.b))) for p in picks}
    assert len(keys) == len(picks) == 11  # 6 pairs x 2 tasks, less the one in flight
    assert ("t0", "m0", "m1") not in keys


def test_stops_at_the_match_budget_and_a_models_own_cap() -> None:
    truth = {"m0": 900.0, "m1": 1000.0, "m2": 1010.0, "m3": 1100.0}
    tasks = [f"t{i}" for i in range(50)]
    done = _play(truth, tasks, Goal(separate=True), Budget(matches=37), seed=2)
    assert len(done) == 37
    assert stop_reason(
        adjacent_pairs(posterior(MODELS, done).intervals(), Goal()), Budget(matches=37),
        spent(_costs(done)),
    ) is Stop.BUDGET  # fmt: skip
    capped = _play(truth, tasks, Goal(separate=True), Budget(per_model_matches=5), seed=2)
    used = spent(_costs(capped)).per_model
    assert max(used.values()) <= 5 and sum(used.values()) == 2 * len(capped)


def test_seconds_and_tokens_are_checked_before_scheduling() -> None:
    used = spent([MatchCost("m0", "m1", seconds=30.0, tokens=500)] * 3)
    assert exhausted(Budget(seconds=90.0), used) == "seconds"
    assert exhausted(Budget(tokens=1501), used) is None
    assert exhausted(Budget(matches=4), used, in_flight=1) == "matches"
    budget = Budget(matches=5)
    assert len(schedule(MODELS, ["t0", "t1"], [], Goal(), budget, used, slots=4)) == 2


def test_prefers_tasks_that_separated_models_before() -> None:
    history = [
        MatchResult("flat", "m0", "m1", "tie"),
        MatchResult("flat", "m0", "m2", "tie"),
        MatchResult("sharp", "m0", "m1", "a"),
        MatchResult("sharp", "m0", "m2", "b"),
    ]
    tasks = ["flat", "fresh", "sharp"]
    scores = task_discrimination(tasks, history)
    assert scores["sharp"][0] > scores["fresh"][0] > scores["flat"][0]
    (pick,) = next_matches(("m0", "m1", "m2"), tasks, history, Goal(), resting={"m0"})
    assert {pick.a, pick.b} == {"m1", "m2"} and pick.task == "sharp"


def test_spends_matches_on_close_neighbours_not_on_pairs_already_ordered() -> None:
    truth = {"m0": 600.0, "m1": 1000.0, "m2": 1040.0, "m3": 1400.0}
    done = _play(truth, [f"t{i}" for i in range(200)], Goal(), Budget(matches=300), seed=3)
    close = sum({m.a, m.b} == {"m1", "m2"} for m in done)
    far = sum({m.a, m.b} == {"m0", "m3"} for m in done)
    assert close > 5 * max(far, 1)


def test_adaptive_ratings_are_unbiased_on_a_simulation() -> None:
    """Over 20 simulated tournaments played to a target width, 2 matches in flight, the
    errors of the ratings, in units of their own standard errors, centre on 0 with spread 1:
    the fit needs no reweighting under a design that depends only on outcomes already seen."""
    z = []
    for seed in range(20):
        rng = np.random.default_rng(100 + seed)
        truth = dict(zip(MODELS, rng.normal(1000, 150, size=4), strict=True))
        centre = sum(truth.values()) / 4
        goal = Goal(target_width=160, separate=False)
        done = _play(truth, [f"t{i}" for i in range(300)], goal, Budget(), seed=seed, slots=2)
        for r in posterior(MODELS, done).intervals():
            assert r.width <= 160
            z.append((r.rating - (truth[r.model] - centre + 1000)) / (r.width / 2 / 1.96))
    mean = sum(z) / len(z)
    sd = math.sqrt(sum((v - mean) ** 2 for v in z) / len(z))
    assert abs(mean) < 0.25 and 0.8 < sd < 1.25
    assert sum(abs(v) > 1.96 for v in z) / len(z) < 0.12


def test_the_goal_holds_for_separated_or_narrow_neighbours() -> None:
    rows = [
        Interval("a", 1220, 1170, 1270, 40),
        Interval("b", 1100, 1040, 1160, 40),  # overlaps c, both narrower than 130
        Interval("c", 1050, 990, 1110, 40),
        Interval("d", 800, 620, 980, 10),  # overlaps nobody
    ]
    pairs = adjacent_pairs(rows, Goal(target_width=130))
    assert [p.resolved for p in pairs] == [True, True, True]
    strict = adjacent_pairs(rows, Goal(target_width=100))
    assert [p.resolved for p in strict] == [True, False, True]
    assert widest_open(strict) == 120
    assert matches_to_finish(strict, Goal(target_width=100)) > 0
    assert matches_to_finish(pairs, Goal(target_width=130)) == 0
    assert stop_reason(pairs, Budget(), spent([])) is Stop.GOAL
    with pytest.raises(ValueError, match="needs"):
        Goal(separate=False)
