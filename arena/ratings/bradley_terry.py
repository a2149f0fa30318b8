"""Bradley-Terry on per-pair scores, weakly regularised, on the 400-point logistic scale.

Why a prior at all: when a model won (or lost) every comparison in its group, the maximum
likelihood sits at infinity, and a fit that stops somewhere on the way shows a number that
means nothing (and a bootstrap of such fits agrees with itself perfectly, so its interval
has no width). Every model is therefore credited with `PRIOR_TIES` virtual tied games
against an average model (strength 0): half a win and half a loss each. That is worth about
as much as one real match, so it bounds every rating and keeps small boards modest, and it
vanishes as real matches accumulate (a model with 60 matches is moved by about 1/60 of its
distance from the mean). With `prior_ties=0` the fit is plain maximum likelihood.

The posterior is fitted by damped Newton steps (the Hessian of a few hundred models is
small), per connected part of the comparison graph: models that never met, directly or
through others, have no common scale, so each part is anchored on its own and the split is
reported. The inverse Hessian at the optimum (a Laplace approximation) gives each rating's
standard error, which the leaderboard's interval never falls below.
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
PRIOR_TIES = 1.0  # virtual ties of every model against an average model (strength 0)
Vector = npt.NDArray[np.float64]


@dataclass(frozen=True)
class BTFit:
    models: tuple[str, ...]
    ratings: Vector  # NaN for a model with no matches
    sd: Vector  # standard error of each rating in points (Laplace), NaN without matches
    matches: npt.NDArray[np.int64]
    components: tuple[tuple[int, ...], ...]
    prior_bounded: tuple[int, ...]  # models whose group the data alone cannot fit finitely
    warnings: tuple[str, ...]
    prior_ties: float = PRIOR_TIES

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


def _objective(theta: Vector, pairs: _Pairs, prior_ties: float) -> float:
    """Negative log posterior: the pairs' likelihood plus each model's virtual ties (or, with
    no prior, a gauge term that pins the mean, since the likelihood ignores a common shift)."""
    d = theta[pairs.i] - theta[pairs.j]
    nll = float(np.sum(pairs.w_ij * np.logaddexp(0.0, -d) + pairs.w_ji * np.logaddexp(0.0, d)))
    if prior_ties:
        ties = np.logaddexp(0.0, -theta) + np.logaddexp(0.0, theta)
        return nll + 0.5 * prior_ties * float(ties.sum())
    return nll + 0.5 * float(theta.sum()) ** 2


def _gradient_and_hessian(
    theta: Vector, pairs: _Pairs, prior_ties: float
) -> tuple[Vector, npt.NDArray[np.float64]]:
    m = theta.size
    s = expit(theta[pairs.i] - theta[pairs.j])
    g_pair = pairs.w_ji * s - pairs.w_ij * (1.0 - s)
    grad: Vector = np.asarray(
        np.bincount(pairs.i, g_pair, m) - np.bincount(pairs.j, g_pair, m), dtype=np.float64
    )
    h_pair = (pairs.w_ij + pairs.w_ji) * s * (1.0 - s)
    hessian = np.zeros((m, m))
    np.add.at(hessian, (pairs.i, pairs.j), -h_pair)
    hessian += hessian.T
    hessian[np.diag_indices(m)] = -hessian.sum(axis=1)
    if prior_ties:
        p = expit(theta)
        grad += prior_ties * (p - 0.5)
        hessian[np.diag_indices(m)] += prior_ties * p * (1.0 - p)
    else:
        grad += theta.sum()
        hessian += 1.0  # the gauge term (sum theta)^2 / 2
    return grad, hessian


def fit_log_strengths(
    scores: Matrix, prior_ties: float = PRIOR_TIES, start: Vector | None = None
) -> Vector:
    """Natural-unit strengths maximizing the posterior of `scores` (not centred: the prior
    gives them a scale of their own; callers centre or anchor them for display)."""
    m = scores.shape[0]
    pairs = _pairs(scores)
    theta = np.zeros(m) if start is None else start - start.mean()
    value = _objective(theta, pairs, prior_ties)
    for _ in range(200):
        grad, hessian = _gradient_and_hessian(theta, pairs, prior_ties)
        step = np.linalg.solve(hessian, grad)
        t = 1.0
        while True:
            candidate = theta - t * step
            new_value = _objective(candidate, pairs, prior_ties)
            if new_value <= value - 1e-4 * t * float(grad @ step) or t < 1e-12:
                break
            t /= 2
        theta, value = candidate, new_value
        if float(np.max(np.abs(t * step))) < 1e-11:
            break
    return theta


def posterior_covariance(scores: Matrix, theta: Vector, prior_ties: float) -> Matrix:
    """The inverse Hessian of the negative log posterior at `theta` (natural units): the
    Laplace covariance of the strengths, which adaptive pairing updates match by match."""
    _, hessian = _gradient_and_hessian(theta, _pairs(scores), prior_ties)
    covariance: Matrix = np.asarray(np.linalg.inv(hessian), dtype=np.float64)
    return covariance


def standard_errors(
    scores: Matrix, theta: Vector, prior_ties: float, anchor: int | None = None
) -> Vector:
    """Each displayed rating's standard error in points, from the inverse Hessian at `theta`:
    of `theta_i - mean(theta)` (ratings centred on the mean), or of `theta_i - theta_anchor`
    (the anchor's own is 0: it is pinned, not estimated)."""
    covariance = posterior_covariance(scores, theta, prior_ties)
    m = theta.size
    if anchor is None:
        centre = np.eye(m) - 1.0 / m
        variance = np.diag(centre @ covariance @ centre.T)
    else:
        variance = np.diag(covariance) + covariance[anchor, anchor] - 2.0 * covariance[:, anchor]
    sd: Vector = np.sqrt(np.clip(variance, 0.0, None)) * SCALE
    return sd


def comparison_parts(scores: Matrix) -> list[list[int]]:
    """Groups of models connected by matches (models without any match are left out)."""
    played = np.nonzero((scores + scores.T).sum(axis=1) > 0)[0]
    graph = csr_matrix((scores + scores.T)[np.ix_(played, played)] > 0)
    count, labels = connected_components(graph, directed=False)
    return [sorted(int(played[k]) for k in np.nonzero(labels == c)[0]) for c in range(count)]


def separated(scores: Matrix) -> bool:
    """True when the maximum likelihood does not exist: it exists only if every model can be
    reached from every other by wins (some model never lost or never won, or a group of
    models beat every model outside it)."""
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
    prior_ties: float = PRIOR_TIES,
) -> BTFit:
    """Ratings with mean 1000 per connected part, or `anchor` = (model, value) pinned."""
    if anchor is not None and anchor[0] not in models:
        raise ValueError(f"anchor model {anchor[0]!r} has no results")
    pinned = (models.index(anchor[0]), anchor[1]) if anchor else None
    ratings = np.full(len(models), np.nan)
    sd = np.full(len(models), np.nan)
    parts = comparison_parts(scores)
    bounded: list[int] = []
    warnings: list[str] = []
    for part in parts:
        sub = scores[np.ix_(part, part)]
        theta = fit_log_strengths(sub, prior_ties)
        ratings[part] = anchor_part(theta, part, pinned)
        local_anchor = part.index(pinned[0]) if pinned and pinned[0] in part else None
        sd[part] = standard_errors(sub, theta, prior_ties, local_anchor)
        if separated(sub):
            bounded.extend(part)
            warnings.extend(_prior_reasons(models, part, sub, prior_ties))
    if len(parts) > 1:
        groups = "; ".join(", ".join(models[k] for k in part) for part in parts)
        warnings.append(
            f"the comparison graph is disconnected into {len(parts)} groups that never met "
            f"({groups}): ratings are comparable only within a group, each anchored on its own"
        )
    for k in np.nonzero(matches == 0)[0]:
        warnings.append(f"{models[k]} has no matches and no rating")
    return BTFit(
        models,
        ratings,
        sd,
        matches,
        tuple(tuple(p) for p in parts),
        tuple(bounded),
        tuple(warnings),
        prior_ties,
    )


def _prior_reasons(
    models: tuple[str, ...], part: list[int], sub: Matrix, prior_ties: float
) -> list[str]:
    how = (
        f"its rating and interval come from the prior ({prior_ties:g} virtual tie(s) "
        "against an average model)"
        if prior_ties
        else "without a prior its fit is not finite"
    )
    reasons = []
    for local, k in enumerate(part):
        won, lost = sub[local].sum(), sub[:, local].sum()
        if lost == 0:
            reasons.append(f"{models[k]} never lost: {how}")
        elif won == 0:
            reasons.append(f"{models[k]} never won: {how}")
    if not reasons:
        names = ", ".join(models[k] for k in part)
        reasons.append(f"wins among {names} do not connect every model both ways: {how}")
    return reasons
