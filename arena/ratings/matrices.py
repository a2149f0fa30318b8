"""Pairwise matrices: win fraction (ties excluded) and battle counts."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from arena.ratings.results import Results


def battle_counts(results: Results) -> npt.NDArray[np.int64]:
    """C[i, j] = matches between i and j, either order (symmetric)."""
    n = results.n_models
    flat = np.bincount(results.a * n + results.b, minlength=n * n).reshape(n, n)
    return (flat + flat.T).astype(np.int64)


def win_fractions(results: Results) -> npt.NDArray[np.float64]:
    """F[i, j] = share of decisive i-vs-j matches that i won; NaN where none was decisive."""
    n = results.n_models
    decisive = results.score_a != 0.5
    a, b, won = results.a[decisive], results.b[decisive], results.score_a[decisive]
    wins = np.bincount(a * n + b, weights=won, minlength=n * n) + np.bincount(
        b * n + a, weights=1.0 - won, minlength=n * n
    )
    wins = wins.reshape(n, n)
    games = wins + wins.T
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(games > 0, wins / games, np.nan)
