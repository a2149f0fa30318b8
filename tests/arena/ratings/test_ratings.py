"""Ratings: known strengths recovered with honest intervals, agreement with an independent fit,
the edge cases that break naive fits, and the board every driver shows."""

from __future__ import annotations

import datetime as dt
import json
import math

import numpy as np
import pytest

from arena.ratings import (
    PRIOR_TIES,
    PROVISIONAL_MATCHES,
    MatchResult,
    Results,
    RoundResult,
    build_board,
    fit_bradley_terry,
    head_to_head,
    online_elo,
    rate_counts,
    rates_by_model_and_language,
    role_ratings,
    tallies,
)
from arena.ratings.leaderboard import leaderboard
from arena.ratings.pairs import match_counts, pair_scores
from arena.ratings.results_file import parse_results_lines

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


def fit(results: Results, anchor: tuple[str, float] | None = None, prior_ties: float = PRIOR_TIES):  # type: ignore[no-untyped-def]
    return fit_bradley_terry(
        results.models, pair_scores(results), match_counts(results), anchor, prior_ties
    )


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
    # imported here: scikit-learn costs every pytest worker 1.4 s to collect this module
    from sklearn.linear_model import LogisticRegression

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
    # the prior as data: each model ties PRIOR_TIES games against a fixed average model
    for k in range(n):
        x = np.zeros(n)
        x[k] = 1.0
        for label in (1, 0):
            rows.append(x)
            labels.append(label)
            weights.append(PRIOR_TIES / 2)
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


def three_to_one(times: int) -> Results:
    rows = [
        ("t1", "a", "b", "a"),
        ("t2", "a", "b", "a"),
        ("t3", "a", "b", "a"),
        ("t4", "a", "b", "b"),
    ]
    return Results.from_rows(
        [(f"{task}-{n}", a, b, w) for n in range(times) for task, a, b, w in rows]
    )


def test_without_the_prior_a_single_pair_matches_the_closed_form() -> None:
    bt = fit(three_to_one(1), prior_ties=0.0)
    gap = 400 * math.log10(3)  # 3 wins to 1
    assert bt.rating("a") == pytest.approx(1000 + gap / 2, abs=1e-6)
    assert bt.rating("b") == pytest.approx(1000 - gap / 2, abs=1e-6)


def test_the_prior_shrinks_few_matches_and_vanishes_as_matches_grow() -> None:
    mle_gap = 400 * math.log10(3)
    gaps = []
    for times in (1, 10, 100):
        bt = fit(three_to_one(times))
        gaps.append(bt.rating("a") - bt.rating("b"))
    assert gaps[0] < gaps[1] < gaps[2] < mle_gap  # pulled towards the mean, less and less
    assert mle_gap - gaps[0] > 15  # 4 matches: clearly shrunk
    assert mle_gap - gaps[2] < 1.0  # 400 matches: the data speak


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
    found = head_to_head(
        tallies(
            [
                MatchResult("t1", "a", "b", "a"),
                MatchResult("t2", "b", "a", "a"),
                MatchResult("t3", "a", "b", "tie"),
                MatchResult("t4", "a", "c", "a"),
            ]
        )
    )
    assert found.models == ("a", "b", "c")
    counts, fractions = found.matches, found.win_fraction
    assert counts[0][1] == counts[1][0] == 3 and counts[1][2] == 0
    assert fractions[0][1] == pytest.approx(0.5) and fractions[0][2] == 1.0
    assert fractions[1][2] is None and fractions[1][0] == pytest.approx(0.5)


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
    rates = {(r.model, r.language): r.counts for r in rates_by_model_and_language(ROUNDS)}
    s_go = rates[("s", "go")]
    assert s_go.rounds == 3 and s_go.patch_correct == 1.0 and s_go.tests_valid == 1.0
    assert (s_go.caught, s_go.wrong_patches, s_go.catch) == (1, 1, 1.0) and s_go.draw == 0.0
    r_go = rates[("r", "go")]
    assert r_go.patch_correct == 0.0 and r_go.tests_valid == 0.5
    assert r_go.wrong_patches == 0 and r_go.catch is None  # every patch it reviewed was correct
    assert rates[("s", "python")].draw == 0.5
    assert rates[("s", "python")].catch is None  # the one patch it reviewed did not apply
    r_python = rates[("r", "python")]  # reviewed a wrong patch with invalid tests: a miss
    assert (r_python.caught, r_python.wrong_patches, r_python.catch) == (0, 1, 0.0)


def test_catch_counts_only_wrong_patches_as_chances() -> None:
    rounds = [  # reviewer "r" against: a correct patch it "caught", a patch that did not
        # apply, a wrong patch caught, a wrong patch missed, a wrong patch with invalid tests
        RoundResult("t1", "s", "r", "reviewer", True, True, True, True),
        RoundResult("t2", "s", "r", "reviewer", False, False, True, False),
        RoundResult("t3", "s", "r", "reviewer", True, False, True, True),
        RoundResult("t4", "s", "r", "draw", True, False, True, False),
        RoundResult("t5", "s", "r", "draw", True, False, False, False),
    ]
    r = rate_counts(rounds)["r"]
    assert (r.caught, r.wrong_patches) == (1, 3) and r.catch == pytest.approx(1 / 3)
    assert (r.valid, r.reviewed) == (4, 5) and r.draw == pytest.approx(2 / 5)
    s = rate_counts(rounds)["s"]
    assert s.catch is None and s.tests_valid is None and s.patch_correct == pytest.approx(1 / 5)


def _demo_language_board(partial_vs_null: str) -> list[MatchResult]:
    """A per-language board of the demo tournament: two tasks, oracle beats everyone."""
    found = []
    for task in ("py-1", "py-2"):
        found += [
            MatchResult(task, "oracle", "partial", "a"),
            MatchResult(task, "oracle", "null", "a"),
            MatchResult(task, "partial", "null", partial_vs_null),
        ]
    return found


@pytest.mark.parametrize("partial_vs_null", ["a", "tie"])
def test_a_model_that_won_every_comparison_gets_a_finite_rating_and_a_wide_interval(
    partial_vs_null: str,
) -> None:
    board = build_board(_demo_language_board(partial_vs_null), bootstrap=200)
    rows = {r.model: r for r in board.rows}
    for row in board.rows:
        assert row.rating is not None and row.ci_low is not None and row.ci_high is not None
        assert math.isfinite(row.rating)
        # every resample of these two identical tasks agrees, yet 6 matches say little
        assert row.ci_high - row.ci_low > 300
        assert row.ci_low < row.rating < row.ci_high
        assert row.provisional and row.prior_bounded
    assert rows["oracle"].rating > rows["partial"].rating >= rows["null"].rating
    assert rows["oracle"].rating < 1500  # modest: one virtual tie outweighs little, not nothing
    assert any("oracle never lost" in w for w in board.warnings)


def test_intervals_narrow_as_matches_grow() -> None:
    widths = []
    for times in (1, 10, 100):
        matches = [
            MatchResult(task, a, b, w)  # type: ignore[arg-type]
            for task, a, b, w in zip(
                three_to_one(times).tasks,
                ["a"] * 4 * times,
                ["b"] * 4 * times,
                ["a", "a", "a", "b"] * times,
                strict=True,
            )
        ]
        row = build_board(matches, bootstrap=200).rows[0]
        assert row.ci_low is not None and row.ci_high is not None
        widths.append(row.ci_high - row.ci_low)
    assert widths[0] > widths[1] > widths[2] > 0


def test_provisional_below_the_set_number_of_matches() -> None:
    matches = [
        MatchResult(f"t{i}", "a", "b" if i % 2 else "c", "a" if i % 3 else "tie")
        for i in range(2 * PROVISIONAL_MATCHES)
    ]
    matches.append(MatchResult("t-last", "b", "d", "a"))
    rows = {r.model: r for r in build_board(matches, bootstrap=50).rows}
    assert rows["a"].matches == 2 * PROVISIONAL_MATCHES and not rows["a"].provisional
    assert rows["b"].matches == PROVISIONAL_MATCHES + 1 and not rows["b"].provisional
    assert rows["c"].matches == PROVISIONAL_MATCHES and not rows["c"].provisional
    assert rows["d"].matches == 1 and rows["d"].provisional


def _at(minute: int) -> dt.datetime:
    return dt.datetime(2026, 1, 1, 12, minute, tzinfo=dt.UTC)


def test_elo_replays_matches_in_finish_order_then_match_id() -> None:
    # given out of order: by id the upset comes first, by finish time it comes last
    matches = [
        MatchResult("t3", "a", "b", "b", finished_at=_at(30), match_id=1),
        MatchResult("t1", "a", "b", "a", finished_at=_at(10), match_id=3),
        MatchResult("t2", "a", "c", "a", finished_at=_at(20), match_id=4),
        MatchResult("t4", "b", "c", "a", finished_at=_at(20), match_id=2),
    ]
    board = build_board(matches, bootstrap=20)
    in_finish_order = online_elo(
        Results.from_rows(
            [
                ("t1", "a", "b", "a"),
                ("t4", "b", "c", "a"),
                ("t2", "a", "c", "a"),
                ("t3", "a", "b", "b"),
            ]
        )
    )
    by_id = online_elo(Results.from_matches(sorted(matches, key=lambda m: m.match_id or 0)))
    shown = {r.model: r.elo for r in board.rows}
    assert shown == pytest.approx(in_finish_order)
    assert shown["a"] != pytest.approx(by_id["a"])  # the order is not a detail
    assert build_board(list(reversed(matches)), bootstrap=20) == board


def test_the_board_carries_role_ratings_and_rates_with_their_denominators() -> None:
    matches = [
        MatchResult("t1", "s", "r", "a", "go", rounds=(ROUNDS[0], ROUNDS[1])),
        MatchResult("t2", "s", "r", "tie", "python", rounds=(ROUNDS[2], ROUNDS[3])),
        MatchResult("t3", "s", "r", "a", "go", rounds=(ROUNDS[4],)),
    ]
    rows = {r.model: r for r in build_board(matches, bootstrap=20).rows}
    s, r = rows["s"], rows["r"]
    assert (s.rounds_submitted, s.patch_correct) == (3, pytest.approx(2 / 3))
    assert (s.rounds_reviewed, s.tests_valid) == (2, 1.0)
    assert (s.wrong_patches_reviewed, s.catch) == (1, 1.0)  # the other patch did not apply
    assert (r.wrong_patches_reviewed, r.catch) == (1, 0.0)
    assert (s.rounds, s.draw) == (5, 0.2)
    assert s.submitter is not None and r.submitter is not None and s.submitter > r.submitter
    assert s.usage is None  # results files record no answers


def test_a_board_says_when_it_mixes_verdicts_of_different_rules_versions() -> None:
    judged = [
        MatchResult("t1", "a", "b", "a", rules_version="2026-12-06"),
        MatchResult("t2", "b", "a", "a", rules_version="2026-12-06"),
    ]
    assert not [w for w in build_board(judged, bootstrap=50).warnings if "rules" in w]
    older = MatchResult("t3", "a", "b", "tie")  # judged before verdicts carried a version
    (warning,) = [w for w in build_board([*judged, older], bootstrap=50).warnings if "rules" in w]
    assert "2026-12-06 (2 matches)" in warning
    assert "none (judged before verdicts carried a rules version) (1 matches)" in warning


def test_the_rules_version_travels_through_a_results_file() -> None:
    line = json.dumps(
        {"task": "t", "a": "a", "b": "b", "winner": "a", "rules_version": "2026-12-06"}
    )
    parsed = parse_results_lines([line])
    assert not parsed.errors and parsed.matches[0].rules_version == "2026-12-06"
    bad = parse_results_lines([json.dumps({**json.loads(line), "rules_version": 7})])
    assert bad.errors and "rules_version" in bad.errors[0]


def test_a_board_names_its_unguarded_tasks_and_results_files_carry_them() -> None:
    judged = [
        MatchResult("t1", "a", "b", "a"),
        MatchResult("cpp1", "b", "a", "a", unguarded=True),
        MatchResult("cpp1", "a", "b", "tie", unguarded=True),
    ]
    (warning,) = [w for w in build_board(judged, bootstrap=50).warnings if "unguarded" in w]
    assert warning.startswith("1 of this board's 2 tasks are unguarded") and "cpp1" in warning
    assert not [w for w in build_board(judged[:1], bootstrap=50).warnings if "unguarded" in w]
    line = json.dumps({"task": "t", "a": "a", "b": "b", "winner": "a", "unguarded": True})
    assert parse_results_lines([line]).matches[0].unguarded
    bad = parse_results_lines([json.dumps({**json.loads(line), "unguarded": "yes"})])
    assert bad.errors and "unguarded" in bad.errors[0]
