"""Ratings: known strengths recovered with honest intervals, agreement with an independent fit,
and the edge cases that break naive fits."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from arena.ratings import (
    Results,
    RoundResult,
    battle_counts,
    fit_bradley_terry,
    leaderboard,
    online_elo,
    rates_by_model_and_language,
    role_ratings,
    win_fractions,
)
from arena.ratings.pairs import match_counts, pair_scores

TRUE = {
    "alpha": 1250.0,
    "bravo": 1120.0,
    "charlie": 1000.0,
    "delta": 960.0,
    "echo": 870.0,
    "foxtrot": 800.0,
}


def simulate(seed: int, tasks: int = 300, per_task: int = 6, ties: float = 0.0) -> Results:
    rng = np.random.default_rng(seed)
    names = list(TRUE)
    rows = []
    for t in range(tasks):
        for _ in range(per_task):
            i, j = rng.choice(len(names), size=2, replace=False)
            p = 1 / (1 + 10 ** ((TRUE[names[j]] - TRUE[names[i]]) / 400))
            draw = rng.random()
            winner = "tie" if draw < ties else ("a" if rng.random() < p else "b")
            rows.append((f"task-{t}", names[i], names[j], winner))
    return Results.from_rows(rows)


def centered_truth() -> dict[str, float]:
    mean = sum(TRUE.values()) / len(TRUE)
    return {m: r - mean + 1000 for m, r in TRUE.items()}


def fit(results: Results, anchor: tuple[str, float] | None = None):  # type: ignore[no-untyped-def]
    return fit_bradley_terry(results.models, pair_scores(results), match_counts(results), anchor)


def test_fitted_order_matches_the_truth() -> None:
    results = simulate(seed=1, tasks=1500)
    bt = fit(results)
    fitted = sorted(results.models, key=bt.rating, reverse=True)
    assert fitted == sorted(TRUE, key=TRUE.__getitem__, reverse=True)
    assert abs(np.nanmean(bt.ratings) - 1000) < 1e-6
    for model, truth in centered_truth().items():
        assert abs(bt.rating(model) - truth) < 40


def test_intervals_cover_the_true_ratings_in_at_least_90_percent_of_seeds() -> None:
    truth = centered_truth()
    covered = trials = 0
    for seed in range(30):
        rows, _ = leaderboard(simulate(seed), rounds=200, seed=seed)
        for row in rows:
            assert row.ci_low is not None and row.ci_high is not None and row.rating is not None
            assert row.ci_low <= row.rating <= row.ci_high
            covered += row.ci_low <= truth[row.model] <= row.ci_high
            trials += 1
    assert covered / trials >= 0.90, f"coverage {covered / trials:.3f}"


def test_agrees_with_a_per_match_logistic_regression_within_half_a_point() -> None:
    results = simulate(seed=7, tasks=400, ties=0.1)
    bt = fit(results)
    n = results.n_models
    # one row per match (a tie: a half-weighted win for each side), +1 for a, -1 for b
    rows, labels, weights = [], [], []
    for a, b, s in zip(results.a, results.b, results.score_a, strict=True):
        x = np.zeros(n)
        x[a], x[b] = 1.0, -1.0
        for label, weight in ((1, s), (0, 1 - s)):
            if weight:
                rows.append(x)
                labels.append(label)
                weights.append(weight)
    model = LogisticRegression(fit_intercept=False, C=np.inf, tol=1e-12, max_iter=10_000)
    model.fit(np.array(rows), np.array(labels), sample_weight=np.array(weights))
    theirs = model.coef_[0] * 400 / math.log(10)
    theirs = theirs - theirs.mean() + 1000
    assert np.max(np.abs(theirs - bt.ratings)) < 0.5


def test_a_model_that_never_lost_stays_finite_and_is_flagged() -> None:
    rows = [
        ("t1", "champ", "x", "a"),
        ("t2", "champ", "y", "a"),
        ("t3", "x", "y", "a"),
        ("t4", "y", "x", "a"),
    ]
    bt = fit(Results.from_rows(rows))
    assert np.all(np.isfinite(bt.ratings))
    assert bt.rating("champ") > bt.rating("x")
    assert any("champ never lost" in w for w in bt.warnings)
    assert bt.models.index("champ") in bt.prior_bounded


def test_a_model_with_no_matches_has_no_rating() -> None:
    results = Results.from_rows(
        [("t1", "a", "b", "a"), ("t2", "b", "a", "a")], extra_models=["idle"]
    )
    rows, bt = leaderboard(results, rounds=50)
    idle = next(r for r in rows if r.model == "idle")
    assert idle.rating is None and idle.rank_ub is None and idle.matches == 0
    assert "idle has no matches and no rating" in bt.warnings
    assert rows[-1].model == "idle"


def test_all_ties_give_equal_ratings() -> None:
    rows = [
        (f"t{i}", a, b, "tie") for i, (a, b) in enumerate([("a", "b"), ("b", "c"), ("a", "c")] * 3)
    ]
    bt = fit(Results.from_rows(rows))
    assert np.allclose(bt.ratings, 1000.0) and bt.warnings == ()


def test_a_single_pair_matches_the_closed_form() -> None:
    rows = [
        ("t1", "a", "b", "a"),
        ("t2", "a", "b", "a"),
        ("t3", "a", "b", "a"),
        ("t4", "a", "b", "b"),
    ]
    bt = fit(Results.from_rows(rows))
    gap = 400 * math.log10(3)  # 3 wins to 1
    assert bt.rating("a") == pytest.approx(1000 + gap / 2, abs=1e-6)
    assert bt.rating("b") == pytest.approx(1000 - gap / 2, abs=1e-6)


def test_disconnected_comparison_graphs_are_reported() -> None:
    rows = [
        ("t1", "a", "b", "a"),
        ("t2", "b", "a", "tie"),
        ("t3", "c", "d", "b"),
        ("t4", "d", "c", "tie"),
    ]
    bt = fit(Results.from_rows(rows))
    assert len(bt.components) == 2
    assert any("disconnected into 2 groups" in w for w in bt.warnings)
    assert (bt.rating("a") + bt.rating("b")) / 2 == pytest.approx(1000)
    assert (bt.rating("c") + bt.rating("d")) / 2 == pytest.approx(1000)


def test_a_pinned_model_sets_the_scale() -> None:
    bt = fit(simulate(seed=3), anchor=("charlie", 1500.0))
    assert bt.rating("charlie") == pytest.approx(1500.0)


def test_rank_ub_counts_models_surely_better() -> None:
    rows, _ = leaderboard(simulate(seed=5, tasks=2000), rounds=200)
    by_model = {r.model: r for r in rows}
    assert by_model["alpha"].rank_ub == 1
    assert by_model["foxtrot"].rank_ub is not None and by_model["foxtrot"].rank_ub >= 4


def test_online_elo_uses_the_standard_scale() -> None:
    elo = online_elo(Results.from_rows([("t1", "a", "b", "a")]), k=32)
    assert elo["a"] == pytest.approx(1016.0) and elo["b"] == pytest.approx(984.0)
    elo = online_elo(Results.from_rows([("t1", "a", "b", "a"), ("t2", "a", "b", "a")]), k=32)
    expected_second = 1 / (1 + 10 ** ((984 - 1016) / 400))
    assert elo["a"] == pytest.approx(1016 + 32 * (1 - expected_second))


def test_matrices_count_battles_and_decisive_wins() -> None:
    results = Results.from_rows(
        [
            ("t1", "a", "b", "a"),
            ("t2", "b", "a", "a"),
            ("t3", "a", "b", "tie"),
            ("t4", "a", "c", "a"),
        ]
    )
    counts = battle_counts(results)
    fractions = win_fractions(results)
    a, b, c = (results.models.index(m) for m in "abc")
    assert counts[a, b] == counts[b, a] == 3 and counts[b, c] == 0
    assert fractions[a, b] == pytest.approx(0.5) and fractions[a, c] == 1.0
    assert math.isnan(fractions[b, c])


ROUNDS = [
    RoundResult("t1", "s", "r", "submitter", True, True, False, False, "go"),
    RoundResult("t1", "r", "s", "reviewer", True, False, True, True, "go"),
    RoundResult("t2", "s", "r", "draw", True, False, False, False, "python"),
    RoundResult("t2", "r", "s", "reviewer", False, False, True, False, "python"),
    RoundResult("t3", "s", "r", "submitter", True, True, True, False, "go"),
]


def test_role_ratings_separate_submitting_from_reviewing() -> None:
    by_model, fit_ = role_ratings(ROUNDS)
    s_sub, s_rev = by_model["s"]
    r_sub, r_rev = by_model["r"]
    assert all(np.isfinite([s_sub, s_rev, r_sub, r_rev]))
    assert s_sub > r_sub and s_rev > r_rev
    assert len(fit_.models) == 4


def test_rates_per_model_and_language() -> None:
    rates = {(r.model, r.language): r for r in rates_by_model_and_language(ROUNDS)}
    s_go = rates[("s", "go")]
    assert s_go.rounds == 3 and s_go.patch_correct == 1.0 and s_go.tests_valid == 1.0
    assert s_go.catch == 1.0 and s_go.draw == 0.0
    r_go = rates[("r", "go")]
    assert r_go.patch_correct == 0.0 and r_go.tests_valid == 0.5 and r_go.catch == 0.0
    assert rates[("s", "python")].draw == 0.5
    assert math.isnan(rates[("s", "python")].catch)  # no valid tests met an applying patch
