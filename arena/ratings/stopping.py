"""When an adaptive tournament stops: its goal met (adjacent intervals), or its budget spent.

Pure functions over typed records. A tournament's goal is about adjacent models on the board
(in rating order): a pair is resolved when their 95% intervals are apart, or when both
intervals are narrower than the width the user asked for (then the board says "these two are
within W points of each other", which is as much as was asked). A budget caps matches, match
seconds (a match's wall time: its model calls and about eight CI runs; the service counts
its CI runs' time), model tokens and money (tokens at the models' prices), per tournament,
and matches per model; it is checked before each match is scheduled, so it is exceeded by
at most what the matches already in flight spend.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Interval:
    """One model's rating and 95% interval, in points (a board row, or the fit's own)."""

    model: str
    rating: float
    low: float
    high: float
    matches: int = 0

    @property
    def width(self) -> float:
        return self.high - self.low


@dataclass(frozen=True)
class Goal:
    """What "certain enough" means: adjacent intervals apart (`separate`), or both intervals
    at most `target_width` points wide (None: no width target)."""

    target_width: float | None = None
    separate: bool = True

    def __post_init__(self) -> None:
        if self.target_width is None and not self.separate:
            raise ValueError("a goal needs separated intervals, a target width, or both")
        if self.target_width is not None and self.target_width <= 0:
            raise ValueError(f"the target width must be positive, not {self.target_width}")


@dataclass(frozen=True)
class Adjacent:
    upper: Interval  # the higher rated of the two
    lower: Interval
    separated: bool
    narrow: bool

    @property
    def resolved(self) -> bool:
        return self.separated or self.narrow

    @property
    def width(self) -> float:
        return max(self.upper.width, self.lower.width)


def adjacent_pairs(intervals: Iterable[Interval], goal: Goal) -> list[Adjacent]:
    """Neighbours on the board, best first, each with whether the goal holds for it."""
    ordered = sorted(intervals, key=lambda r: (-r.rating, r.model))
    pairs = []
    for upper, lower in itertools.pairwise(ordered):
        separated = goal.separate and upper.low > lower.high
        narrow = goal.target_width is not None and (
            max(upper.width, lower.width) <= goal.target_width
        )
        pairs.append(Adjacent(upper, lower, separated, narrow))
    return pairs


def widest_open(pairs: Sequence[Adjacent]) -> float | None:
    """The stopping criterion shown to the user: the widest interval among the models of
    adjacent pairs not yet resolved (None: every pair is resolved)."""
    open_widths = [p.width for p in pairs if not p.resolved]
    return max(open_widths) if open_widths else None


@dataclass(frozen=True)
class Budget:
    """Caps for one tournament (None: no cap). `per_model_matches` caps each model alone."""

    matches: int | None = None
    seconds: float | None = None  # summed match wall time
    tokens: int | None = None  # prompt + completion tokens of every answer
    per_model_matches: int | None = None
    money: float | None = None  # USD: tokens at the models' registered prices


@dataclass(frozen=True)
class MatchCost:
    """What one finished match spent (seconds and tokens unknown: 0)."""

    a: str
    b: str
    seconds: float = 0.0
    tokens: int = 0
    money: float = 0.0


@dataclass(frozen=True)
class Spent:
    matches: int = 0
    seconds: float = 0.0
    tokens: int = 0
    per_model: dict[str, int] = field(default_factory=dict)
    money: float = 0.0


def spent(costs: Iterable[MatchCost]) -> Spent:
    matches, seconds, tokens, money = 0, 0.0, 0, 0.0
    per_model: dict[str, int] = {}
    for c in costs:
        matches += 1
        seconds += c.seconds
        tokens += c.tokens
        money += c.money
        for model in (c.a, c.b):
            per_model[model] = per_model.get(model, 0) + 1
    return Spent(matches, seconds, tokens, per_model, money)


def budget_left(budget: Budget, used: Spent, in_flight: int = 0) -> dict[str, float]:
    """What is left of each capped quantity (matches count those in flight as spent)."""
    left: dict[str, float] = {}
    if budget.matches is not None:
        left["matches"] = budget.matches - used.matches - in_flight
    if budget.seconds is not None:
        left["seconds"] = budget.seconds - used.seconds
    if budget.tokens is not None:
        left["tokens"] = budget.tokens - used.tokens
    if budget.money is not None:
        left["money"] = budget.money - used.money
    return left


def exhausted(budget: Budget, used: Spent, in_flight: int = 0) -> str | None:
    """The first cap that forbids scheduling another match, or None. Seconds and tokens are
    known only once a match finishes, so they overshoot by at most the matches in flight."""
    for name, value in budget_left(budget, used, in_flight).items():
        if value <= 0:
            return name
    return None


def model_allowed(budget: Budget, used: Spent, model: str, in_flight: int = 0) -> bool:
    """Whether `model` may play one more match (`in_flight`: its matches already scheduled)."""
    cap = budget.per_model_matches
    return cap is None or used.per_model.get(model, 0) + in_flight < cap


class Stop(StrEnum):
    GOAL = "goal"  # every adjacent pair resolved
    BUDGET = "budget"  # a cap reached
    EXHAUSTED = "no matches left"  # every (pair, task) that could help was played


def stop_reason(pairs: Sequence[Adjacent], budget: Budget, used: Spent) -> Stop | None:
    """Why the tournament stops now, or None to go on (checked before each scheduling)."""
    if all(p.resolved for p in pairs):
        return Stop.GOAL
    if exhausted(budget, used) is not None:
        return Stop.BUDGET
    return None


def placing(pairs: Sequence[Adjacent], newcomers: Collection[str]) -> list[Adjacent]:
    """The adjacent pairs that place a newcomer (a model added to a tournament that had
    already run): while any is open, matches go to it alone, and the goal is judged on these
    pairs only (the rest of the board was settled, or given up on, before it came)."""
    if not newcomers:
        return list(pairs)
    return [p for p in pairs if p.upper.model in newcomers or p.lower.model in newcomers]


def matches_to_finish(pairs: Sequence[Adjacent], goal: Goal) -> int:
    """A rough estimate of the matches still needed: an interval narrows as 1/sqrt(matches),
    so a model of an open pair whose interval is w wide and must reach w* needs about
    n (w/w*)^2 matches in all (w* the target width, or the width that would separate it from
    its neighbour: their gap, shared by both intervals); each match serves two models."""
    need: dict[str, float] = {}
    for p in pairs:
        if p.resolved:
            continue
        gap = max(p.upper.rating - p.lower.rating, 1.0)
        wanted = [goal.target_width] if goal.target_width is not None else []
        if goal.separate:
            wanted.append(gap)  # two intervals of width gap/2 around ratings gap apart
        target = max(wanted)  # either suffices: the easier one
        for row in (p.upper, p.lower):
            more = max(row.matches, 1) * ((row.width / target) ** 2 - 1.0)
            need[row.model] = max(need.get(row.model, 0.0), more)
    return math.ceil(sum(max(v, 0.0) for v in need.values()) / 2)
