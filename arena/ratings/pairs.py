"""Aggregating matches into per-ordered-pair scores, whole or per task."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy import sparse

from arena.ratings.results import Results

Matrix = npt.NDArray[np.float64]


def pair_scores(results: Results) -> Matrix:
    """W[i, j]: what i scored against j (wins, plus half of each tie)."""
    n = results.n_models
    flat = np.bincount(results.a * n + results.b, weights=results.score_a, minlength=n * n)
    flat = flat + np.bincount(
        results.b * n + results.a, weights=1.0 - results.score_a, minlength=n * n
    )
    scores: Matrix = flat.reshape(n, n).astype(np.float64)
    return scores


def task_pair_matrix(results: Results) -> sparse.csr_matrix:
    """Row t holds task t's contribution to the flattened W, so that sum_t c_t * row_t is W."""
    n = results.n_models
    rows = np.concatenate([results.task, results.task])
    cols = np.concatenate([results.a * n + results.b, results.b * n + results.a])
    data = np.concatenate([results.score_a, 1.0 - results.score_a])
    matrix = sparse.coo_matrix((data, (rows, cols)), shape=(len(results.tasks), n * n))
    return matrix.tocsr()


def match_counts(results: Results) -> npt.NDArray[np.int64]:
    """How many matches each model played."""
    n = results.n_models
    counts: npt.NDArray[np.int64] = np.bincount(results.a, minlength=n) + np.bincount(
        results.b, minlength=n
    )
    return counts
