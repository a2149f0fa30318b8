"""Match-level standings: Bradley-Terry with honest intervals, rank bound, Elo beside it, W/L/T.

The interval is the task bootstrap's, widened to at least the fit's own (see `bootstrap`), so
a model that won every comparison on a few tasks shows a wide interval, not a point."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from arena.ratings.bootstrap import bootstrap_ratings, widen
from arena.ratings.bradley_terry import BTFit, fit_bradley_terry
from arena.ratings.elo import online_elo
from arena.ratings.pairs import match_counts, pair_scores
from arena.ratings.results import Results


@dataclass(frozen=True)
class Standing:
    model: str
    rating: float | None
    ci_low: float | None
    ci_high: float | None
    rank_ub: int | None
    matches: int
    wins: int
    losses: int
    ties: int
    elo: float
    prior_bounded: bool


def _num(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def leaderboard(
    results: Results,
    rounds: int = 1000,
    seed: int = 0,
    anchor: tuple[str, float] | None = None,
    elo_k: float = 32.0,
    on_progress: Callable[[int], None] = lambda _: None,
) -> tuple[list[Standing], BTFit]:
    """One standing per model, best rated first; Elo replays `results` in their order."""
    fit = fit_bradley_terry(results.models, pair_scores(results), match_counts(results), anchor)
    intervals = widen(bootstrap_ratings(results, fit, rounds, seed, anchor, on_progress), fit)
    ranks = intervals.rank_ub(fit.components)
    elo = online_elo(results, k=elo_k)
    n = results.n_models
    wins = np.bincount(results.a, weights=results.score_a == 1, minlength=n) + np.bincount(
        results.b, weights=results.score_a == 0, minlength=n
    )
    ties = np.bincount(results.a, weights=results.score_a == 0.5, minlength=n) + np.bincount(
        results.b, weights=results.score_a == 0.5, minlength=n
    )
    played = match_counts(results)
    rows = []
    for k, model in enumerate(results.models):
        rated = not math.isnan(fit.ratings[k])
        rows.append(
            Standing(
                model=model,
                rating=_num(fit.ratings[k]),
                ci_low=_num(intervals.low[k]) if rated else None,
                ci_high=_num(intervals.high[k]) if rated else None,
                rank_ub=int(ranks[k]) if rated else None,
                matches=int(played[k]),
                wins=int(wins[k]),
                losses=int(played[k] - wins[k] - ties[k]),
                ties=int(ties[k]),
                elo=elo[model],
                prior_bounded=k in fit.prior_bounded,
            )
        )
    rows.sort(key=lambda r: (r.rating is None, -(r.rating or 0.0), r.model))
    return rows, fit
