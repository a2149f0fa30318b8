"""The adaptive tournament's driver: asks the pairing engine for matches, plays them, stops.

All decisions are the engine's (`arena.ratings.pairing.schedule`, `arena.ratings.stopping`);
this loop only keeps the books: matches finished, failed and in flight, tasks that could not
be prepared, and what was spent. Playing a match is a callable, so the loop runs the same
with the real arena and with a stand-in in tests.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING

from arena.ratings.pairing import Scheduled, posterior, schedule
from arena.ratings.records import MatchResult
from arena.ratings.stopping import (
    Budget,
    Goal,
    MatchCost,
    Spent,
    Stop,
    adjacent_pairs,
    budget_left,
    matches_to_finish,
    spent,
    stop_reason,
    widest_open,
)

if TYPE_CHECKING:
    from arena.match import MatchFailure, MatchRecord


@dataclass(frozen=True)
class Status:
    """What the progress line shows after each match."""

    finished: int
    failed: int
    in_flight: int
    widest: float | None  # widest interval among unresolved neighbours; None: goal met
    target: float | None
    to_finish: int  # estimated matches still needed
    used: Spent
    left: dict[str, float]

    def line(self) -> str:
        if self.widest is None:
            criterion = "every neighbour resolved"
        else:
            aim = f"{self.target:.0f}" if self.target is not None else "apart"
            criterion = f"widest open interval {self.widest:.0f} (target {aim})"
        budget = ", ".join(f"{k} left {v:g}" for k, v in self.left.items())
        spent_text = f"{self.used.matches} played ({self.used.seconds:.0f} s)"
        return "; ".join(
            x for x in (criterion, f"~{self.to_finish} to go", spent_text, budget) if x
        )


@dataclass(frozen=True)
class AdaptiveRun:
    records: list[MatchRecord]
    failures: list[MatchFailure]
    skipped_tasks: list[str]
    stop: Stop
    status: Status


def _result(record: MatchRecord) -> MatchResult:
    winner = "tie" if record.result == "tie" else ("a" if record.result == record.a else "b")
    return MatchResult(record.task, record.a, record.b, winner)  # type: ignore[arg-type]


def run_adaptive(
    models: Sequence[str],
    tasks: Sequence[str],
    play: Callable[[Scheduled], MatchRecord | MatchFailure | None],
    goal: Goal,
    budget: Budget,
    jobs: int = 1,
    seed: int = 0,
    on_status: Callable[[Status], None] = lambda _: None,
) -> AdaptiveRun:
    """Plays matches `jobs` at a time, each chosen when a slot frees, until the goal holds,
    the budget is spent or no useful (pair, task) is left. `play` returns None for a task
    that cannot be prepared: it leaves the pool and no match is counted."""
    from arena.match import MatchFailure

    records: list[MatchRecord] = []
    failures: list[MatchFailure] = []
    skipped: list[str] = []
    pool_tasks = list(tasks)
    flying: dict[Future[MatchRecord | MatchFailure | None], Scheduled] = {}

    def costs() -> list[MatchCost]:
        done = [MatchCost(r.a, r.b, seconds=r.duration_s) for r in records]
        return done + [MatchCost(f.a, f.b) for f in failures]  # a failed match counts too

    def status() -> Status:
        results = [_result(r) for r in records]
        pairs = adjacent_pairs(posterior(models, results).intervals(), goal)
        used = spent(costs())
        return Status(
            finished=len(records),
            failed=len(failures),
            in_flight=len(flying),
            widest=widest_open(pairs),
            target=goal.target_width,
            to_finish=matches_to_finish(pairs, goal),
            used=used,
            left=budget_left(budget, used, len(flying)),
        )

    stop = Stop.EXHAUSTED
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        while True:
            results = [_result(r) for r in records]
            failed = [Scheduled(f.task, f.a, f.b) for f in failures]
            picks = schedule(
                models,
                pool_tasks,
                results,
                goal,
                budget,
                spent(costs()),
                slots=jobs,
                in_flight=list(flying.values()),
                seed=seed,
                failed=failed,
            )
            for p in picks:
                match = Scheduled(p.task, p.a, p.b)
                flying[pool.submit(play, match)] = match
            if not flying:
                pairs = adjacent_pairs(posterior(models, results).intervals(), goal)
                stop = stop_reason(pairs, budget, spent(costs())) or Stop.EXHAUSTED
                break
            done, _ = wait(list(flying), return_when=FIRST_COMPLETED)
            for future in done:
                match = flying.pop(future)
                outcome = future.result()
                if outcome is None:
                    if match.task in pool_tasks:
                        pool_tasks.remove(match.task)
                        skipped.append(match.task)
                elif isinstance(outcome, MatchFailure):
                    failures.append(outcome)
                else:
                    records.append(outcome)
            on_status(status())
    return AdaptiveRun(records, failures, skipped, stop, status())
