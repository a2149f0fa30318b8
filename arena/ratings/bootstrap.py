"""Confidence intervals from a bootstrap that resamples tasks, not matches.

Matches on the same issue share its difficulty, so they are not independent; resampling
whole tasks keeps that. Each round reweights the per-task pair scores and refits with the
same prior as the point fit (the virtual ties are a prior, not data: never resampled).

A bootstrap alone is not an honest interval when tasks are few or all tell the same story:
if every task shows A beating B, every resample does too and the percentiles collapse to a
point. `widen` therefore never lets an interval be narrower than the fit's own (Laplace)
interval, which reflects how few matches there are.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from arena.ratings.bradley_terry import (
    SCALE,
    BTFit,
    Vector,
    anchor_points,
    fit_log_strengths_batch,
    local_pin,
)
from arena.ratings.pairs import task_pair_matrix
from arena.ratings.results import Results


@dataclass(frozen=True)
class Intervals:
    low: Vector
    high: Vector
    samples: npt.NDArray[np.float64]  # rounds x models, NaN where a model drew no task

    def rank_ub(self, parts: tuple[tuple[int, ...], ...]) -> npt.NDArray[np.int64]:
        """1 + how many models (of the same comparable group) are surely better."""
        ranks = np.zeros(self.low.size, dtype=np.int64)
        for part in parts:
            idx = np.asarray(part)
            better = self.low[idx][None, :] > self.high[idx][:, None]
            ranks[idx] = 1 + better.sum(axis=1)
        return ranks


def bootstrap_ratings(
    results: Results,
    fit: BTFit,
    rounds: int = 1000,
    seed: int = 0,
    anchor: tuple[str, float] | None = None,
    on_progress: Callable[[int], None] = lambda _: None,
    chunk: int = 100,
) -> Intervals:
    """95% intervals (2.5/97.5 percentiles) of `rounds` task-resampled refits."""
    n, n_tasks = results.n_models, len(results.tasks)
    per_task = task_pair_matrix(results)
    rng = np.random.default_rng(seed)
    pinned = (fit.models.index(anchor[0]), anchor[1]) if anchor else None
    starts = {
        part: (fit.ratings[list(part)] - fit.ratings[list(part)].mean()) / SCALE
        for part in fit.components
    }
    samples = np.full((rounds, n), np.nan)
    done = 0
    while done < rounds:
        size = min(chunk, rounds - done)
        draws = rng.integers(0, n_tasks, size=(size, n_tasks))
        flat = (np.arange(size)[:, None] * n_tasks + draws).ravel()
        counts = np.bincount(flat, minlength=size * n_tasks).reshape(size, n_tasks).astype(float)
        weighted = np.asarray((per_task.T @ counts.T).T).reshape(size, n, n)
        for part, start in starts.items():
            _refit_part(
                samples[done : done + size], weighted, list(part), start, pinned, fit.prior_ties
            )
        done += size
        on_progress(done)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # models without any rating: NaN
        low = np.nanpercentile(samples, 2.5, axis=0)
        high = np.nanpercentile(samples, 97.5, axis=0)
    return Intervals(low=low, high=high, samples=samples)


def _refit_part(
    samples: npt.NDArray[np.float64],
    scores: npt.NDArray[np.float64],
    part: list[int],
    start: Vector,
    pinned: tuple[int, float] | None,
    prior_ties: float,
) -> None:
    """Fills `samples` (rounds x models) for `part`'s models from each round's refit. A
    round says nothing on this scale, and leaves NaN, when fewer than two of the part's
    models drew a task, or when the anchor drew none."""
    sub = scores[:, part][:, :, part]
    present = (sub + np.swapaxes(sub, 1, 2)).sum(axis=2) > 0
    usable = present.sum(axis=1) >= 2
    pin = local_pin(part, pinned)
    if pin is not None:
        usable &= present[:, pin[0]]
    rows = np.nonzero(usable)[0]
    if rows.size == 0:
        return
    present = present[rows]
    theta = fit_log_strengths_batch(
        sub[rows], present, prior_ties, np.broadcast_to(start, present.shape)
    )
    samples[np.ix_(rows, np.asarray(part, dtype=np.int64))] = anchor_points(theta, present, pin)


Z95 = 1.959963984540054  # two-sided 95% of a normal


def widen(intervals: Intervals, fit: BTFit) -> Intervals:
    """Each interval as the union of the task bootstrap's and the fit's own `rating +- z sd`:
    the bootstrap speaks for task-to-task variation, the Laplace interval for how few
    matches there are; neither is allowed to hide the other. A model that drew no task in
    any resample keeps the Laplace interval alone."""
    low = np.fmin(intervals.low, fit.ratings - Z95 * fit.sd)
    high = np.fmax(intervals.high, fit.ratings + Z95 * fit.sd)
    return Intervals(low=low, high=high, samples=intervals.samples)
