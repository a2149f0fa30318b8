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


Batch = npt.NDArray[np.float64]  # rounds x models: one fit per row
Mask = npt.NDArray[np.bool_]  # rounds x models: the models a round's fit estimates


@dataclass(frozen=True)
class _Rounds:
    """What a batch of fits does not change between Newton steps, computed once (and taken
    apart only when some rounds have stopped moving)."""

    scores: npt.NDArray[np.float64]  # rounds x models x models: wins of row over column
    total: npt.NDArray[np.float64]  # games between each pair, both ways
    present: Mask
    absent: Mask | None  # None when every round estimates every model
    prior_ties: float

    @classmethod
    def of(cls, scores: npt.NDArray[np.float64], present: Mask, prior_ties: float) -> _Rounds:
        absent = ~present
        return cls(
            scores,
            scores + np.swapaxes(scores, 1, 2),
            present,
            absent if absent.any() else None,
            prior_ties,
        )

    def subset(self, rows: npt.NDArray[np.int64]) -> _Rounds:
        absent = None if self.absent is None else self.absent[rows]
        return _Rounds(
            self.scores[rows], self.total[rows], self.present[rows], absent, self.prior_ties
        )

    def objective(self, theta: Batch) -> Vector:
        """Each round's negative log posterior: the pairs' likelihood plus each model's
        virtual ties (or, with no prior, a gauge term that pins the mean, since the
        likelihood ignores a common shift). Absent models sit at 0 and add nothing."""
        d = theta[:, :, None] - theta[:, None, :]
        nll: Vector = (self.scores * np.logaddexp(0.0, -d)).sum(axis=(1, 2))
        if self.prior_ties:
            ties = np.logaddexp(0.0, -theta) + np.logaddexp(0.0, theta)
            if self.absent is not None:
                ties *= self.present
            penalty: Vector = 0.5 * self.prior_ties * ties.sum(axis=1)
        else:
            penalty = 0.5 * (theta * self.present).sum(axis=1) ** 2
        return nll + penalty

    def newton_system(self, theta: Batch) -> tuple[Batch, npt.NDArray[np.float64]]:
        """Gradient and Hessian per round; an absent model's row and column are the
        identity's, so Newton leaves it where it is and the system stays regular."""
        m = theta.shape[1]
        s = expit(theta[:, :, None] - theta[:, None, :])  # s[r, i, j]: P(i beats j)
        grad: Batch = (self.total * s - self.scores).sum(axis=2)
        hessian = self.total * s * (s - 1.0)  # off the diagonal; its diagonal is 0
        diagonal = -hessian.sum(axis=2)
        if self.prior_ties:
            p = expit(theta)
            grad += self.prior_ties * (p - 0.5)
            diagonal += self.prior_ties * p * (1.0 - p)
        else:
            grad += (theta * self.present).sum(axis=1, keepdims=True)
            hessian += self.present[:, :, None] & self.present[:, None, :]  # (sum theta)^2 / 2
        if self.absent is not None:
            grad[self.absent] = 0.0
            diagonal[self.absent] = 1.0
            hessian[self.absent[:, :, None] | self.absent[:, None, :]] = 0.0
        hessian.reshape(-1, m * m)[:, :: m + 1] += diagonal
        return grad, hessian


def fit_log_strengths_batch(
    scores: npt.NDArray[np.float64], present: Mask, prior_ties: float, start: Batch
) -> Batch:
    """One posterior fit per round (`scores` rounds x models x models), all rounds advanced
    together by damped Newton steps: a bootstrap's thousand small fits cost a few array
    operations each instead of a thousand Python loops. A round stops moving once its step
    is below 1e-11; models absent from a round stay at 0 (not centred: callers anchor)."""
    present = present.astype(bool)
    counts = np.maximum(present.sum(axis=1, keepdims=True), 1)
    theta: Batch = np.where(
        present, start - (start * present).sum(axis=1, keepdims=True) / counts, 0.0
    )
    everyone = _Rounds.of(scores, present, prior_ties)
    value = everyone.objective(theta)
    rows = np.arange(theta.shape[0])
    rounds = everyone
    for _ in range(200):
        grad, hessian = rounds.newton_system(theta[rows])
        step = np.linalg.solve(hessian, grad[:, :, None])[:, :, 0]
        slope = (grad * step).sum(axis=1)
        t = np.ones(rows.size)
        candidate = theta[rows] - step
        new_value = rounds.objective(candidate)
        short = new_value > value[rows] - 1e-4 * slope
        while short.any():
            t[short] /= 2
            candidate[short] = theta[rows[short]] - t[short, None] * step[short]
            new_value[short] = rounds.subset(np.nonzero(short)[0]).objective(candidate[short])
            short &= (new_value > value[rows] - 1e-4 * t * slope) & (t >= 1e-12)
        theta[rows], value[rows] = candidate, new_value
        moving = np.abs(t[:, None] * step).max(axis=1) >= 1e-11
        if not moving.all():
            if not moving.any():
                break
            rows, rounds = rows[moving], rounds.subset(np.nonzero(moving)[0])
    return theta


def fit_log_strengths(
    scores: Matrix, prior_ties: float = PRIOR_TIES, start: Vector | None = None
) -> Vector:
    """Natural-unit strengths maximizing the posterior of `scores` (not centred: the prior
    gives them a scale of their own; callers centre or anchor them for display)."""
    m = scores.shape[0]
    begin = np.zeros(m) if start is None else start
    every = np.ones((1, m), dtype=bool)
    theta: Vector = fit_log_strengths_batch(scores[None], every, prior_ties, begin[None])[0]
    return theta


def posterior_covariance(scores: Matrix, theta: Vector, prior_ties: float) -> Matrix:
    """The inverse Hessian of the negative log posterior at `theta` (natural units): the
    Laplace covariance of the strengths, which adaptive pairing updates match by match."""
    every = np.ones((1, theta.size), dtype=bool)
    _, hessian = _Rounds.of(scores[None], every, prior_ties).newton_system(theta[None])
    covariance: Matrix = np.asarray(np.linalg.inv(hessian[0]), dtype=np.float64)
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


def anchor_points(
    theta: npt.NDArray[np.float64],
    present: npt.NDArray[np.bool_],
    pinned: tuple[int, float] | None,
) -> npt.NDArray[np.float64]:
    """One part's log strengths (the last axis; leading axes are a batch of refits) on the
    rating scale: `pinned` = (index in the part, value) fixes one model, else the present
    models average BASE. Models not `present` (they drew nothing in a resample) are NaN."""
    points = theta * SCALE
    if pinned is not None:
        shift = pinned[1] - points[..., pinned[0]]
    else:
        shift = BASE - np.sum(points, axis=-1, where=present) / present.sum(axis=-1)
    return np.where(present, points + np.expand_dims(shift, -1), np.nan)


def local_pin(
    part: list[int] | tuple[int, ...], pinned: tuple[int, float] | None
) -> tuple[int, float] | None:
    """`pinned` (index among all models, value) as an index within `part`, if it is there."""
    if pinned is None or pinned[0] not in part:
        return None
    return list(part).index(pinned[0]), pinned[1]


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
        pin = local_pin(part, pinned)
        ratings[part] = anchor_points(theta, np.ones(len(part), dtype=bool), pin)
        sd[part] = standard_errors(sub, theta, prior_ties, None if pin is None else pin[0])
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
