"""Adaptive pairing: the next (pair, task) whose match most narrows the board's open neighbours.

The rule (information-based, deterministic up to a seeded tie-break). The board's own fit
(`bradley_terry`: Bradley-Terry with `PRIOR_TIES` virtual ties per model) has a Laplace
covariance C, the inverse of the posterior's Hessian H. One more match between k and l adds
p(1-p) u u' to H (u = e_k - e_l, p the fitted chance that k wins), whatever its outcome, so
the variance it leaves on any contrast e is known before it is played (Sherman-Morrison):

    Var'(e) = Var(e) - p(1-p) (e'Cu)^2 / (1 + p(1-p) u'Cu)

The contrasts that matter are the displayed ratings (centred on the mean) of the models of
adjacent pairs whose goal (`stopping.Goal`) does not hold yet: their intervals are what must
part or narrow. Each such rating has a variance v it must reach (the target width's, or half
the pair's gap, whichever is easier); a candidate pair scores the variance it removes from
each, weighted by (current variance / v) / v, so a model many times over its target draws
matches before one nearly there, and the best pair is played. This is a weighted c-optimal
(targeted A-optimal) design on the Bradley-Terry covariance: unlike D-optimality, which
shrinks the volume of the whole ellipsoid and so keeps spending on pairs already ordered for
sure, it puts matches where the leaderboard can still change, and it finds indirect routes
(playing A-C can place A when C is well known). It is deterministic, so no pair needs a
sampling probability. (Scoring the adjacent *differences* instead orders neighbours without
narrowing their own intervals; unweighted, it spreads matches evenly over open pairs: both
measured worse in `bench/pairing.py`.)

Why the ratings stay unbiased without reweighting. Chatbot Arena (arXiv 2403.04132, sec. 5)
samples pairs at random and reweights the fit by the inverse of each pair's probability; that
reweighting makes the estimate target the uniform-pairing estimand of a model that may be
misspecified. Here the choice of the next match depends only on the outcomes already seen
(and the seed), never on the outcome it is about to produce, so the likelihood of the data
factorises into the Bradley-Terry terms times design terms that do not involve the ratings:
the maximum-likelihood (and posterior) estimate is the same function of the data as under a
fixed design (likelihood principle), consistent and asymptotically normal with the observed
information as its covariance (sequential-design results for GLMs). `bench/pairing.py` checks
this on simulations: adaptive ratings land within the round robin's intervals of the truth.
The task bootstrap on top (`bootstrap.widen`) keeps intervals never narrower than Laplace's.
What the likelihood principle does not cover is the stop: a pair stops drawing matches once
its intervals part, so an end model (one neighbour only) is last measured where it looks
apart, and its rating leans a little outward (measured over 40 seeds: about +5 points at the
top, -9 at the bottom, inside an RMS error of 20, where round robin, which stops all pairs
together, shows no such lean). It is the sequential-stopping bias of any separate-then-stop
rule, small against the intervals; continuing past separation would remove it at the price
of the matches adaptive saves.

Tasks. The covariance does not see tasks, but a task every model solves (or none does) ends
in a tie whoever plays it and orders nobody. Each task therefore carries its record so far:
its discrimination is (decisive matches + 1) / (matches + 2), a task never played starting at
1/2; the chosen pair plays its most discriminating task it has not played, the least played
among equals, then a seeded draw. A (pair, task) is never played twice, in either order.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from arena.ratings.bradley_terry import (
    BASE,
    PRIOR_TIES,
    SCALE,
    Vector,
    fit_log_strengths,
    posterior_covariance,
)
from arena.ratings.pairs import Matrix, match_counts, pair_scores
from arena.ratings.records import MatchResult
from arena.ratings.results import Results
from arena.ratings.stopping import (
    Z95,
    Adjacent,
    Budget,
    Goal,
    Interval,
    Spent,
    adjacent_pairs,
    exhausted,
    model_allowed,
    placing,
)

MIN_GAP = 10.0  # points: the smallest gap a pair is asked to resolve by separation


@dataclass(frozen=True)
class Pick:
    """A match to play next: `a` submits first; `gain` is its score (the weighted variance
    it removes from the open models' ratings: what it was chosen for)."""

    task: str
    a: str
    b: str
    gain: float


@dataclass(frozen=True)
class Scheduled:
    """A match scheduled and not finished yet."""

    task: str
    a: str
    b: str


def _key(task: str, a: str, b: str) -> tuple[str, str, str]:
    first, second = sorted((a, b))
    return task, first, second


@dataclass(frozen=True)
class Posterior:
    """The board's fit over `models` (in that order), natural units."""

    models: tuple[str, ...]
    theta: Vector
    covariance: Matrix
    matches: np.ndarray

    def intervals(self) -> list[Interval]:
        """Each model's Laplace 95% interval in points (centred on 1000): the fit's own."""
        m = len(self.models)
        centre = np.eye(m) - 1.0 / m
        sd = np.sqrt(np.clip(np.diag(centre @ self.covariance @ centre.T), 0.0, None)) * SCALE
        points = (self.theta - self.theta.mean()) * SCALE + BASE
        return [
            Interval(
                model,
                float(points[k]),
                float(points[k] - Z95 * sd[k]),
                float(points[k] + Z95 * sd[k]),
                int(self.matches[k]),
            )
            for k, model in enumerate(self.models)
        ]


def posterior(models: Sequence[str], matches: Sequence[MatchResult]) -> Posterior:
    """The board's regularised Bradley-Terry fit of the matches among `models` (one fit for
    all of them: the virtual ties make it proper even before the graph is connected)."""
    names = tuple(models)
    known = set(names)
    kept = [m for m in matches if m.a in known and m.b in known]
    results = Results.from_matches(kept, extra_models=names)
    scores = pair_scores(results)
    theta = fit_log_strengths(scores, PRIOR_TIES)
    return Posterior(
        names, theta, posterior_covariance(scores, theta, PRIOR_TIES), match_counts(results)
    )


def task_discrimination(
    tasks: Sequence[str], matches: Sequence[MatchResult]
) -> dict[str, tuple[float, int]]:
    """Per task: (decisive + 1) / (played + 2), and how many matches it has had."""
    played = dict.fromkeys(tasks, 0)
    decisive = dict.fromkeys(tasks, 0)
    for m in matches:
        if m.task in played:
            played[m.task] += 1
            decisive[m.task] += m.winner != "tie"
    return {t: ((decisive[t] + 1) / (played[t] + 2), played[t]) for t in tasks}


def next_matches(
    models: Sequence[str],
    tasks: Sequence[str],
    matches: Sequence[MatchResult],
    goal: Goal,
    count: int = 1,
    in_flight: Sequence[Scheduled] = (),
    resting: Collection[str] = (),
    seed: int = 0,
    failed: Sequence[Scheduled] = (),
    newcomers: Collection[str] = (),
) -> list[Pick]:
    """Up to `count` matches to schedule now, best first (fewer, or none, when the goal
    holds for every adjacent pair or no unplayed (pair, task) is left). Matches in flight
    count as information already coming, so a batch spreads over the open pairs; models in
    `resting` (their own budget spent) are not scheduled; a (pair, task) that `failed` is
    not tried again. With `newcomers` (models added to a board that had already run), only
    their matches are played, toward the neighbours that still leave them unplaced."""
    if len(models) < 2 or count < 1:
        return []
    rng = np.random.default_rng(seed + len(matches) + len(in_flight))
    post = posterior(models, matches)
    index = {m: k for k, m in enumerate(post.models)}
    pairs = placing(adjacent_pairs(post.intervals(), goal), newcomers)
    open_pairs = [p for p in pairs if not p.resolved]
    if not open_pairs:
        return []
    taken = {_key(m.task, m.a, m.b) for m in matches} | {
        _key(s.task, s.a, s.b) for s in (*in_flight, *failed)
    }
    tally = task_discrimination(tasks, matches)
    hessian: Matrix = np.asarray(np.linalg.inv(post.covariance), dtype=np.float64)
    for s in in_flight:
        if s.a in index and s.b in index:
            hessian = _add_match(hessian, post.theta, index[s.a], index[s.b])
    contrasts, target = _contrasts(open_pairs, index, len(post.models), goal)
    picks: list[Pick] = []
    for _ in range(count):
        covariance: Matrix = np.asarray(np.linalg.inv(hessian), dtype=np.float64)
        candidates = [
            (k, j)
            for k in range(len(post.models))
            for j in range(k + 1, len(post.models))
            if post.models[k] not in resting
            and post.models[j] not in resting
            and (not newcomers or post.models[k] in newcomers or post.models[j] in newcomers)
            and any(_key(t, post.models[k], post.models[j]) not in taken for t in tasks)
        ]
        if not candidates:
            break
        gains = _gains(covariance, post.theta, contrasts, target, candidates)
        best = np.flatnonzero(gains >= gains.max() * (1 - 1e-9))
        k, j = candidates[int(rng.choice(best))]
        ma, mb = post.models[k], post.models[j]
        free = [t for t in tasks if _key(t, ma, mb) not in taken]
        top = max(tally[t][0] for t in free)
        sharp = [t for t in free if tally[t][0] >= top - 1e-12]
        least = min(tally[t][1] for t in sharp)
        task = str(rng.choice([t for t in sharp if tally[t][1] == least]))
        if rng.random() < 0.5:
            ma, mb = mb, ma
        picks.append(Pick(task, ma, mb, float(gains.max())))
        taken.add(_key(task, ma, mb))
        hessian = _add_match(hessian, post.theta, k, j)
    return picks


def _add_match(hessian: Matrix, theta: Vector, k: int, j: int) -> Matrix:
    p = float(expit(theta[k] - theta[j]))
    u = np.zeros(theta.size)
    u[k], u[j] = 1.0, -1.0
    updated: Matrix = hessian + p * (1 - p) * np.outer(u, u)
    return updated


def _contrasts(
    pairs: Sequence[Adjacent], index: dict[str, int], m: int, goal: Goal
) -> tuple[Matrix, Vector]:
    """One row per model of each open pair: its rating as the board shows it (centred on
    the mean), whose interval is what must narrow; and the variance that row must reach
    (natural units): the target width's, or the one that would part the pair's intervals
    (each half their gap wide), whichever is easier."""
    rows = np.zeros((2 * len(pairs), m))
    target = np.zeros(2 * len(pairs))
    for r, p in enumerate(pairs):
        widths = [max(p.upper.rating - p.lower.rating, MIN_GAP)] if goal.separate else []
        if goal.target_width is not None:
            widths.append(goal.target_width)
        sd = max(widths) / (2 * Z95 * SCALE)
        for side, row in enumerate((p.upper, p.lower)):
            rows[2 * r + side] = -1.0 / m
            rows[2 * r + side, index[row.model]] += 1.0
            target[2 * r + side] = sd * sd
    return rows, target


def _gains(
    covariance: Matrix,
    theta: Vector,
    contrasts: Matrix,
    target: Vector,
    candidates: list[tuple[int, int]],
) -> Vector:
    """Per candidate pair: the variance one match removes from the open models' ratings
    (Sherman-Morrison on the Laplace covariance), each weighted by how many times over its
    target variance it is, per unit of that target, so a pair far from its goal weighs more
    than one nearly there."""
    first = np.array([c[0] for c in candidates])
    second = np.array([c[1] for c in candidates])
    d = np.zeros((len(candidates), theta.size))
    d[np.arange(len(candidates)), first] = 1.0
    d[np.arange(len(candidates)), second] = -1.0
    p = expit(theta[first] - theta[second])
    info = p * (1 - p)
    cd = covariance @ d.T  # m x P
    q = np.einsum("pm,mp->p", d, cd)
    removed = (contrasts @ cd) ** 2 / (1.0 / info + q)[None, :]
    variance = np.einsum("rm,mn,rn->r", contrasts, covariance, contrasts)
    weight = variance / target**2
    gains: Vector = (removed * weight[:, None]).sum(axis=0)
    return gains


def schedule(
    models: Sequence[str],
    tasks: Sequence[str],
    matches: Sequence[MatchResult],
    goal: Goal,
    budget: Budget,
    used: Spent,
    slots: int = 1,
    in_flight: Sequence[Scheduled] = (),
    seed: int = 0,
    failed: Sequence[Scheduled] = (),
    newcomers: Collection[str] = (),
) -> list[Pick]:
    """The matches to start now within the budget: checked before anything is scheduled,
    so a cap is passed by no more than the matches in flight (match counts never). Nothing
    when the goal holds, a cap is reached or every useful (pair, task) was played."""
    if exhausted(budget, used, len(in_flight)) is not None:
        return []
    count = slots - len(in_flight)
    if budget.matches is not None:
        count = min(count, budget.matches - used.matches - len(in_flight))
    flying = {m: sum(m in (s.a, s.b) for s in in_flight) for m in models}
    resting = {m for m in models if not model_allowed(budget, used, m, flying[m])}
    picks = next_matches(
        models, tasks, matches, goal, count, in_flight, resting, seed, failed, newcomers
    )
    if budget.per_model_matches is None:
        return picks
    kept: list[Pick] = []
    for p in picks:  # one batch may not take a model past its own cap either
        if all(model_allowed(budget, used, m, flying[m]) for m in (p.a, p.b)):
            kept.append(p)
            flying[p.a] += 1
            flying[p.b] += 1
    return kept
