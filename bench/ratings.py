"""Our Bradley-Terry fit with a 1000-round task bootstrap against FastChat's two approaches.

- FastChat's current `rating_systems.py` (`compute_bt`, `compute_bootstrap_bt`): battles
  aggregated into unique (a, b, outcome) rows with counts, the BT loss minimized with scipy's
  L-BFGS, bootstrap by resampling battles (multinomial reweighting of the unique rows). This is
  the fair comparison: the target is ours no slower than it, while ours also resamples whole
  tasks (intervals that respect matches sharing an issue).
- FastChat's older `compute_mle_elo`: a per-match logistic regression (scikit-learn, a dense
  row per battle, ties as a win and a loss). Nobody fits that way any more; shown for history.

Here: 1,000,000 matches among 100 models on 5,000 tasks. Ours runs in full; each baseline's
bootstrap is timed on some rounds and extrapolated to 1,000 (labelled so). Prints both ratios,
the largest rating difference between the point estimates (ours carries its prior, one virtual
tie per model, which the baselines lack: a small fraction of a point at this size), and our
peak memory.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
import tracemalloc

import numpy as np
from rich.console import Console
from rich.table import Table
from scipy.optimize import minimize
from scipy.special import log_expit
from sklearn.linear_model import LogisticRegression

from arena.ratings import Results, bootstrap_ratings, fit_bradley_terry
from arena.ratings.pairs import match_counts, pair_scores


def simulate(models: int, tasks: int, matches: int, seed: int) -> tuple[Results, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = rng.normal(1000, 150, size=models)
    task = rng.integers(0, tasks, size=matches)
    a = rng.integers(0, models, size=matches)
    b = (a + rng.integers(1, models, size=matches)) % models  # never a == b
    p_a = 1 / (1 + 10 ** ((truth[b] - truth[a]) / 400))
    u = rng.random(matches)
    score = np.where(u < 0.05, 0.5, (rng.random(matches) < p_a).astype(float))
    results = Results(
        models=tuple(f"model-{i:03d}" for i in range(models)),
        tasks=tuple(f"task-{t}" for t in range(tasks)),
        task=task.astype(np.int64),
        a=a.astype(np.int64),
        b=b.astype(np.int64),
        score_a=score,
    )
    return results, truth


def fastchat_fit(a: np.ndarray, b: np.ndarray, score: np.ndarray, models: int) -> np.ndarray:
    """compute_mle_elo's method: duplicate the battles, ties as one win and one loss."""
    n = a.size
    x = np.zeros((2 * n, models))
    rows = np.arange(n)
    for half in (0, 1):
        x[rows + half * n, a] = math.log(10)
        x[rows + half * n, b] = -math.log(10)
    y = np.zeros(2 * n)
    y[:n] = score > 0.0  # a win, or the win half of a tie
    y[n:] = score == 1.0  # a win, else (loss, or the loss half of a tie) 0
    lr = LogisticRegression(fit_intercept=False, C=np.inf, tol=1e-6)
    lr.fit(x, y)
    ratings: np.ndarray = 400 * lr.coef_[0] + 1000
    return ratings - ratings.mean() + 1000


ALPHA = math.log(10) / 400


def aggregate_battles(
    a: np.ndarray, b: np.ndarray, score: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`preprocess_for_bt`'s idea: one row per distinct (a, b, outcome), with its count."""
    rows = np.stack([a, b, np.rint(score * 2).astype(np.int64)], axis=1)
    unique, counts = np.unique(rows, axis=0, return_counts=True)
    return unique[:, 0], unique[:, 1], unique[:, 2] / 2.0, counts.astype(np.float64)


def aggregated_fit(
    a: np.ndarray, b: np.ndarray, outcome: np.ndarray, weights: np.ndarray, models: int
) -> np.ndarray:
    """`compute_bt`'s method: the weighted BT log-loss minimized by L-BFGS with its gradient."""

    def loss_and_grad(ratings: np.ndarray) -> tuple[float, np.ndarray]:
        diff = ALPHA * (ratings[a] - ratings[b])
        loss = -np.sum(weights * (outcome * log_expit(diff) + (1 - outcome) * log_expit(-diff)))
        residual = weights * (outcome - 1 / (1 + np.exp(-diff))) * ALPHA
        grad = np.zeros(models)
        np.add.at(grad, a, -residual)
        np.add.at(grad, b, residual)
        return float(loss), grad

    fitted = minimize(
        loss_and_grad, np.zeros(models), jac=True, method="L-BFGS-B", options={"gtol": 1e-6}
    )
    ratings: np.ndarray = fitted.x
    return ratings - ratings.mean() + 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=100)
    parser.add_argument("--tasks", type=int, default=5000)
    parser.add_argument("--matches", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--baseline-rounds", type=int, default=2, help="timed, then extrapolated")
    parser.add_argument(
        "--aggregated-rounds", type=int, default=100, help="timed, then extrapolated"
    )
    args = parser.parse_args()
    console = Console()
    results, _ = simulate(args.models, args.tasks, args.matches, seed=0)
    console.print(f"{len(results):,} matches, {args.models} models, {args.tasks:,} tasks")

    tracemalloc.start()
    started = time.perf_counter()
    fit = fit_bradley_terry(results.models, pair_scores(results), match_counts(results))
    point_s = time.perf_counter() - started
    intervals = bootstrap_ratings(results, fit, rounds=args.rounds, seed=0)
    ours_s = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert np.all(np.isfinite(intervals.low))

    started = time.perf_counter()
    agg_a, agg_b, agg_outcome, agg_counts = aggregate_battles(results.a, results.b, results.score_a)
    aggregated = aggregated_fit(agg_a, agg_b, agg_outcome, agg_counts, args.models)
    agg_point_s = time.perf_counter() - started
    rng = np.random.default_rng(2)
    weights = rng.multinomial(len(results), agg_counts / len(results), size=args.aggregated_rounds)
    started = time.perf_counter()
    for sample in weights:
        aggregated_fit(agg_a, agg_b, agg_outcome, sample.astype(np.float64), args.models)
    agg_per_round = (time.perf_counter() - started) / args.aggregated_rounds
    agg_s = agg_point_s + agg_per_round * args.rounds

    fits = []
    started = time.perf_counter()
    theirs = fastchat_fit(results.a, results.b, results.score_a, args.models)
    fits.append(time.perf_counter() - started)
    rng = np.random.default_rng(1)
    for _ in range(args.baseline_rounds):
        sample = rng.integers(0, len(results), size=len(results))
        started = time.perf_counter()
        fastchat_fit(results.a[sample], results.b[sample], results.score_a[sample], args.models)
        fits.append(time.perf_counter() - started)
    per_fit = statistics.median(fits)
    baseline_s = per_fit * (1 + args.rounds)

    table = Table(title="Bradley-Terry + bootstrap")
    for column in ("", "point fit", f"fit + {args.rounds} bootstrap rounds", "ours is"):
        table.add_column(column)
    table.add_row(
        "ours (aggregated pairs, Newton, task bootstrap)", f"{point_s:.3f}s", f"{ours_s:.1f}s", ""
    )
    table.add_row(
        "FastChat compute_bt (aggregated, L-BFGS, battle bootstrap)",
        f"{agg_point_s:.3f}s",
        f"{agg_s:.1f}s (extrapolated from {args.aggregated_rounds} rounds)",
        f"{agg_s / ours_s:.2f}x faster",
    )
    table.add_row(
        "FastChat compute_mle_elo (per-match logistic regression)",
        f"{fits[0]:.1f}s",
        f"{baseline_s:.0f}s (extrapolated from {len(fits)} fits)",
        f"{baseline_s / ours_s:.0f}x faster",
    )
    console.print(table)
    console.print(
        f"ratio ours / aggregated L-BFGS: {ours_s / agg_s:.2f} (target: at most 1.0); "
        f"ours / per-match logistic regression: {ours_s / baseline_s:.4f}"
    )
    for label, other in (("aggregated L-BFGS", aggregated), ("logistic regression", theirs)):
        diff = float(np.max(np.abs(other - fit.ratings)))
        console.print(f"largest rating difference, ours vs {label}: {diff:.3f} points")
    console.print(f"our peak traced memory: {peak / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
