"""An adaptive tournament as the service keeps it: what to schedule next, and what to show.

The service stores matches, not a running loop, so each decision starts from the books
(`Book`: every match so far with its status and cost) and asks the engine's pure rules
(`pairing.schedule`, `stopping`) the same questions `arena tournament --mode adaptive` asks
in one process: which matches to start now, whether to stop and why, and how far the board
is from its goal. No rule lives here; this module only turns the books into their inputs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from arena.ratings.pairing import Pick, Scheduled, posterior, schedule
from arena.ratings.records import MatchResult
from arena.ratings.stopping import (
    Adjacent,
    Budget,
    Goal,
    Interval,
    MatchCost,
    Spent,
    Stop,
    adjacent_pairs,
    budget_left,
    matches_to_finish,
    placing,
    spent,
    stop_reason,
    widest_open,
)


@dataclass(frozen=True)
class Book:
    """One adaptive tournament's matches as stored. `costs` holds the ended matches (done or
    failed: a failed match spent its calls and runs too); `tasks` is the pool still usable
    (a task found invalid has left it); `newcomers` are models being placed."""

    models: tuple[str, ...]
    tasks: tuple[str, ...]
    results: tuple[MatchResult, ...]
    failed: tuple[Scheduled, ...]
    in_flight: tuple[Scheduled, ...]
    costs: tuple[MatchCost, ...]
    goal: Goal
    budget: Budget
    newcomers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Standing:
    """What the user is shown: the criterion against its target, the estimate, the budget."""

    widest: float | None  # widest interval among unresolved neighbours; None: goal met
    target: float | None
    to_finish: int
    used: Spent
    left: dict[str, float]


@dataclass(frozen=True)
class Decision:
    """Matches to start now, or the reason to stop (only once nothing is in flight: a match
    still playing may change the board, and its cost is counted when it ends)."""

    picks: tuple[Pick, ...]
    stop: Stop | None


def _pairs(book: Book) -> list[Adjacent]:
    board = adjacent_pairs(posterior(book.models, book.results).intervals(), book.goal)
    return placing(board, book.newcomers)


def standing(book: Book) -> Standing:
    pairs = _pairs(book)
    used = spent(book.costs)
    return Standing(
        widest=widest_open(pairs),
        target=book.goal.target_width,
        to_finish=matches_to_finish(pairs, book.goal),
        used=used,
        left=budget_left(book.budget, used, len(book.in_flight)),
    )


def decide(book: Book, slots: int, seed: int) -> Decision:
    """Up to `slots` matches in flight; when none can start and none is in flight, stop."""
    used = spent(book.costs)
    picks = schedule(
        book.models,
        book.tasks,
        book.results,
        book.goal,
        book.budget,
        used,
        slots=slots,
        in_flight=book.in_flight,
        seed=seed,
        failed=book.failed,
        newcomers=book.newcomers,
    )
    if picks or book.in_flight:
        return Decision(tuple(picks), None)
    return Decision((), stop_reason(_pairs(book), book.budget, used) or Stop.EXHAUSTED)


def unplaced(rows: Iterable[Interval], goal: Goal) -> set[str]:
    """The models an adaptive tournament's board marks provisional: those of a neighbouring
    pair for which the goal does not hold yet (their order, or their width, is not settled)."""
    return {
        model
        for p in adjacent_pairs(rows, goal)
        if not p.resolved
        for model in (p.upper.model, p.lower.model)
    }
