"""Our Bradley-Terry fit with a 1000-round task bootstrap against FastChat's approach.

FastChat (`fastchat/serve/monitor/rating_systems.py`, `compute_mle_elo`) fits a
per-match logistic regression (scikit-learn, a dense row per battle, ties as a win and a
loss) and bootstraps by refitting it on resampled battles. Here: 1,000,000 matches among
100 models on 5,000 tasks. Ours runs in full; the baseline's bootstrap is timed on a few
rounds and extrapolated to 1,000 (labelled so). Prints the ratio, the largest rating
difference between the two point estimates, and our peak memory. Target: 50x.
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=100)
    parser.add_argument("--tasks", type=int, default=5000)
    parser.add_argument("--matches", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--baseline-rounds", type=int, default=2, help="timed, then extrapolated")
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
    for column in ("", "point fit", f"fit + {args.rounds} bootstrap rounds"):
        table.add_column(column)
    table.add_row("ours (aggregated pairs, Newton)", f"{point_s:.3f}s", f"{ours_s:.1f}s")
    table.add_row(
        "FastChat (per-match logistic regression)",
        f"{fits[0]:.1f}s",
        f"{baseline_s:.0f}s (extrapolated from {len(fits)} fits)",
    )
    console.print(table)
    diff = float(np.max(np.abs(theirs - fit.ratings)))
    console.print(f"speed-up: {baseline_s / ours_s:.0f}x (target: at least 50x)")
    console.print(f"largest rating difference between the two point fits: {diff:.3f} points")
    console.print(f"our peak traced memory: {peak / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
