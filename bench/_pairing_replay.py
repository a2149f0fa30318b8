"""Adaptive pairing against round robin replayed over stored results (a results file).

`python bench/pairing.py --replay results.jsonl` takes the matches a
tournament stored (`arena tournament --results`, `GET /api/results.jsonl`) as the only ones
that can be played: each strategy asks for (pair, task)s and gets the stored outcome, the
adaptive one restricted to the (pair, task)s that were stored. With no true ratings, the
reference is the board of all stored matches: reported, over seeds, the matches each needs
until (a) every adjacent pair that the whole file separates is separated, in the same order,
and (b) every interval is at most --width wide, and the ratio with its spread.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from arena.ratings.pairing import Scheduled, next_matches, posterior
from arena.ratings.records import MatchResult
from arena.ratings.results_file import parse_results_lines
from arena.ratings.stopping import Goal, Interval

CHECK_EVERY = 4
_FLIP = {"a": "b", "b": "a", "tie": "tie"}


@dataclass(frozen=True)
class Stored:
    models: tuple[str, ...]
    tasks: tuple[str, ...]
    outcomes: dict[tuple[str, str, str], MatchResult]  # (task, a, b) with a < b
    reference: tuple[Interval, ...]  # the board of every stored match

    @classmethod
    def read(cls, path: Path) -> Stored:
        parsed = parse_results_lines(path.read_text().splitlines())
        if parsed.errors:
            raise SystemExit(f"{path}: " + "; ".join(parsed.errors[:5]))
        outcomes: dict[tuple[str, str, str], MatchResult] = {}
        for m in parsed.matches:
            a, b = sorted((m.a, m.b))
            winner = m.winner if (a, b) == (m.a, m.b) else _FLIP[m.winner]
            outcomes.setdefault((m.task, a, b), MatchResult(m.task, a, b, winner))  # type: ignore[arg-type]
        models = tuple(sorted({x for _, a, b in outcomes for x in (a, b)}))
        if len(models) < 3:
            raise SystemExit(f"{path}: a replay needs matches of at least three models")
        tasks = tuple(sorted({t for t, _, _ in outcomes}))
        reference = tuple(posterior(models, list(outcomes.values())).intervals())
        return cls(models, tasks, outcomes, reference)

    def play(self, task: str, a: str, b: str) -> MatchResult:
        lo, hi = sorted((a, b))
        stored = self.outcomes[(task, lo, hi)]
        winner = stored.winner if (lo, hi) == (a, b) else _FLIP[stored.winner]
        return MatchResult(task, a, b, winner)  # type: ignore[arg-type]

    def unstored(self) -> list[Scheduled]:
        """Every (pair, task) that was never played: the adaptive strategy may not ask for it."""
        return [
            Scheduled(t, a, b)
            for t in self.tasks
            for i, a in enumerate(self.models)
            for b in self.models[i + 1 :]
            if (t, a, b) not in self.outcomes
        ]


def _separated(ordered: Sequence[Interval]) -> list[tuple[str, str]]:
    return [(hi.model, lo.model) for hi, lo in itertools.pairwise(ordered) if hi.low > lo.high]


def met(stored: Stored, done: list[MatchResult], criterion: str, width: float) -> bool:
    intervals = posterior(stored.models, done).intervals()
    if criterion == "b":
        return all(i.width <= width for i in intervals)
    now = {(a, b) for a, b in _separated(sorted(intervals, key=lambda i: -i.rating))}
    return set(_separated(sorted(stored.reference, key=lambda i: -i.rating))) <= now


def round_robin(stored: Stored, seed: int, criterion: str, width: float) -> int | None:
    rng = np.random.default_rng(seed)
    by_task: dict[str, list[MatchResult]] = {}
    for m in stored.outcomes.values():
        by_task.setdefault(m.task, []).append(m)
    done: list[MatchResult] = []
    for t in rng.permutation(len(stored.tasks)):
        played = by_task[stored.tasks[t]]
        for k in rng.permutation(len(played)):
            done.append(played[k])
            if len(done) % CHECK_EVERY == 0 and met(stored, done, criterion, width):
                return len(done)
    return len(done) if met(stored, done, criterion, width) else None


def adaptive(stored: Stored, seed: int, criterion: str, width: float) -> int | None:
    goal = Goal(separate=True) if criterion == "a" else Goal(target_width=width, separate=False)
    unstored = stored.unstored()
    done: list[MatchResult] = []
    while True:
        picks = next_matches(stored.models, stored.tasks, done, goal, seed=seed, failed=unstored)
        if not picks:
            break
        done.append(stored.play(picks[0].task, picks[0].a, picks[0].b))
        if len(done) % CHECK_EVERY == 0 and met(stored, done, criterion, width):
            return len(done)
    return len(done) if met(stored, done, criterion, width) else None


def summary(path: Path, seeds: int, width: float) -> list[str]:
    """Lines to print: matches needed per criterion, mean over seeds, and the ratio."""
    stored = Stored.read(path)
    lines = [
        f"replay of {path}: {len(stored.outcomes)} stored matches, {len(stored.models)} models,"
        f" {len(stored.tasks)} tasks; reference: the board of all of them"
    ]
    for criterion, label in (("a", "(a) the whole file's separations"), ("b", f"(b) <= {width:g}")):
        rr = [round_robin(stored, s, criterion, width) for s in range(seeds)]
        ad = [adaptive(stored, s, criterion, width) for s in range(seeds)]
        pairs = [(x, y) for x, y in zip(ad, rr, strict=True) if x is not None and y is not None]
        if not pairs:
            lines.append(f"{label}: not reached within the stored matches")
            continue
        ratios = [x / y for x, y in pairs]
        q = np.percentile(ratios, [10, 50, 90])
        lines.append(
            f"{label}: round robin {statistics.fmean(y for _, y in pairs):.0f}, adaptive "
            f"{statistics.fmean(x for x, _ in pairs):.0f} matches; ratio "
            f"{statistics.fmean(ratios):.2f} (10-90% {q[0]:.2f}-{q[2]:.2f}); not reached: "
            f"round robin {rr.count(None)}, adaptive {ad.count(None)} of {seeds}"
        )
    return lines
