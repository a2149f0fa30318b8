"""Bradley-Terry by maximum likelihood on per-pair scores, on the 400-point logistic scale.

The likelihood is fitted by damped Newton steps (the Hessian of a few hundred models is
small), per connected part of the comparison graph: models that never met, directly or
through others, have no common scale, so each part is anchored on its own and the split
is reported. Where the maximum likelihood does not exist (someone never lost or never won
within their part) a weak Gaussian prior keeps the fit finite, and the fit says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components
from scipy.special import expit

from arena.ratings.pairs import Matrix

SCALE = 400 / math.log(10)  # natural log-odds -> Elo points
BASE = 1000.0
PRIOR = 0.01  # precision of the fallback prior, in natural units (sd 10 = 1737 points)
Vector = npt.NDArray[np.float64]


@dataclass(frozen=True)
class BTFit:
    models: tuple[str, ...]
    ratings: Vector  # NaN for a model with no matches
    matches: npt.NDArray[np.int64]
    components: tuple[tuple[int, ...], ...]
    prior_bounded: tuple[int, ...]
    warnings: tuple[str, ...]

    def rating(self, model: str) -> float:
        return float(self.ratings[self.models.index(model)])


@dataclass(frozen=True)
class _Pairs:
    i: npt.NDArray[np.int64]
    j: npt.NDArray[np.int64]
    w_ij: Vector
    w_ji: Vector


def _pairs(scores: Matrix) -> _Pairs:
    upper = np.triu(scores + scores.T, k=1) > 0
    i, j = np.nonzero(upper)
    return _Pairs(i, j, scores[i, j], scores[j, i])


def _objective(theta: Vector, pairs: _Pairs, prior: float) -> float:
    d = theta[pairs.i] - theta[pairs.j]
    nll = float(np.sum(pairs.w_ij * np.logaddexp(0.0, -d) + pairs.w_ji * np.logaddexp(0.0, d)))
    return nll + 0.5 * prior * float(theta @ theta) + 0.5 * float(theta.sum()) ** 2


def fit_log_strengths(scores: Matrix, prior: float = 0.0, start: Vector | None = None) -> Vector:
    """Natural-unit strengths (mean 0) maximizing the likelihood of `scores` (plus the prior)."""
    m = scores.shape[0]
    pairs = _pairs(scores)
    theta = np.zeros(m) if start is None else start - start.mean()
    value = _objective(theta, pairs, prior)
    for _ in range(200):
        d = theta[pairs.i] - theta[pairs.j]
        s = expit(d)
        g_pair = pairs.w_ji * s - pairs.w_ij * (1.0 - s)
        grad = np.bincount(pairs.i, g_pair, m) - np.bincount(pairs.j, g_pair, m)
        grad += prior * theta + theta.sum()
        h_pair = (pairs.w_ij + pairs.w_ji) * s * (1.0 - s)
        hessian = np.zeros((m, m))
        np.add.at(hessian, (pairs.i, pairs.j), -h_pair)
        hessian += hessian.T
        hessian[np.diag_indices(m)] = -hessian.sum(axis=1) + prior
        hessian += 1.0  # the gauge term (sum theta)^2 / 2
        step = np.linalg.solve(hessian, grad)
        t = 1.0
        while True:
            candidate = theta - t * step
            new_value = _objective(candidate, pairs, prior)
            if new_value <= value - 1e-4 * t * float(grad @ step) or t < 1e-12:
                break
            t /= 2
        theta, value = candidate, new_value
        if float(np.max(np.abs(t * step))) < 1e-11:
            break
    centered: Vector = theta - theta.mean()
    return centered


def comparison_parts(scores: Matrix) -> list[list[int]]:
    """Groups of models connected by matches (models without any match are left out)."""
    played = np.nonzero((scores + scores.T).sum(axis=1) > 0)[0]
    graph = csr_matrix((scores + scores.T)[np.ix_(played, played)] > 0)
    count, labels = connected_components(graph, directed=False)
    return [sorted(int(played[k]) for k in np.nonzero(labels == c)[0]) for c in range(count)]


def needs_prior(scores: Matrix) -> bool:
    """The MLE exists only if every model can be reached from every other by wins."""
    if scores.shape[0] < 2:
        return False
    count, _ = connected_components(csr_matrix(scores > 0), directed=True, connection="strong")
    return bool(count > 1)


def anchor_part(theta: Vector, part: list[int], anchor: tuple[int, float] | None) -> Vector:
    points: Vector = theta * SCALE
    if anchor is not None and anchor[0] in part:
        shift = anchor[1] - float(points[part.index(anchor[0])])
    else:
        shift = BASE - float(points.mean())
    return points + shift


def fit_bradley_terry(
    models: tuple[str, ...],
    scores: Matrix,
    matches: npt.NDArray[np.int64],
    anchor: tuple[str, float] | None = None,
) -> BTFit:
    """Ratings with mean 1000 per connected part, or `anchor` = (model, value) pinned."""
    if anchor is not None and anchor[0] not in models:
        raise ValueError(f"anchor model {anchor[0]!r} has no results")
    pinned = (models.index(anchor[0]), anchor[1]) if anchor else None
    ratings = np.full(len(models), np.nan)
    parts = comparison_parts(scores)
    bounded: list[int] = []
    warnings: list[str] = []
    for part in parts:
        sub = scores[np.ix_(part, part)]
        prior = PRIOR if needs_prior(sub) else 0.0
        theta = fit_log_strengths(sub, prior)
        ratings[part] = anchor_part(theta, part, pinned)
        if prior:
            bounded.extend(part)
            warnings.extend(_prior_reasons(models, part, sub))
    if len(parts) > 1:
        groups = "; ".join(", ".join(models[k] for k in part) for part in parts)
        warnings.append(
            f"the comparison graph is disconnected into {len(parts)} groups that never met "
            f"({groups}): ratings are comparable only within a group, each anchored on its own"
        )
    for k in np.nonzero(matches == 0)[0]:
        warnings.append(f"{models[k]} has no matches and no rating")
    return BTFit(
        models, ratings, matches, tuple(tuple(p) for p in parts), tuple(bounded), tuple(warnings)
    )


def _prior_reasons(models: tuple[str, ...], part: list[int], sub: Matrix) -> list[str]:
    reasons = []
    for local, k in enumerate(part):
        won, lost = sub[local].sum(), sub[:, local].sum()
        if lost == 0:
            reasons.append(
                f"{models[k]} never lost: its rating is finite only through a weak prior"
            )
        elif won == 0:
            reasons.append(f"{models[k]} never won: its rating is finite only through a weak prior")
    if not reasons:
        names = ", ".join(models[k] for k in part)
        reasons.append(
            f"wins among {names} do not connect every model both ways: "
            "a weak prior keeps ratings finite"
        )
    return reasons
