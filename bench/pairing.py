"""Adaptive pairing against round robin on simulated tournaments with known true ratings.

Each seed draws a tournament: models with true ratings (adjacent gaps of 80-200 points, so
some neighbours are far harder to order than others) and tasks of varied difficulty and
discrimination. A match on a task ties with a probability that grows as the task sits far
from the pair's level (every model solves it, or none does) and with the task's own tie
propensity (a quarter of the tasks almost always tie); the tie chance is capped so that a's
expected score is exactly the Bradley-Terry chance sigma(r_a - r_b), so the board's fit
(ties as half a win) is the true model and its ratings can be checked against the truth.

Round robin plays every pair on a task before the next task (as `arena tournament` does),
tasks and pairs in a random order; adaptive asks `arena.ratings.pairing.next_matches` for one
match at a time. Both are judged by the same intervals: the board's fit's own 95% (Laplace)
intervals, which the board's task bootstrap only ever widens (a bootstrap per match would
make the bench hours long). Reported, over seeds:
  (a) matches until every adjacent pair is in the true order with its intervals apart;
  (b) matches until every interval is at most --width points wide;
and the ratio adaptive / round robin with its spread. Bias: at (a), the share of adaptive
ratings within the round robin's own interval half-width of the true rating (about 95% if
adaptive is as unbiased as round robin), and the mean signed error at each true rank (a
systematic pull, e.g. of the best model towards the mean, would show there).

    python bench/pairing.py                # 40 seeds, about two minutes on 2 cores
    python bench/pairing.py --seeds 100 --workers 4
    python bench/pairing.py --replay results.jsonl   # stored results (bench/_pairing_replay.py)
    python bench/pairing.py --write-results sim.jsonl  # one simulated round robin, to replay
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/, uninstalled
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from arena.ratings.bradley_terry import BASE
from arena.ratings.pairing import next_matches, posterior
from arena.ratings.records import MatchResult
from arena.ratings.stopping import Goal, Interval
from bench._pairing_replay import summary as replay_summary

CHECK_EVERY = 4  # round robin's criterion is checked every few matches


@dataclass(frozen=True)
class World:
    truth: np.ndarray  # points, centred on BASE
    difficulty: np.ndarray  # per task, points
    propensity: np.ndarray  # per task: its own tie chance near the pair's level
    models: tuple[str, ...]
    tasks: tuple[str, ...]


def world(seed: int, n_models: int, n_tasks: int) -> World:
    rng = np.random.default_rng(seed)
    gaps = rng.uniform(80, 200, size=n_models - 1)
    truth = np.concatenate([[0.0], np.cumsum(gaps)])[rng.permutation(n_models)]
    truth = truth - truth.mean() + BASE
    difficulty = rng.normal(BASE, 1.2 * float(np.std(truth)), size=n_tasks)
    flat = rng.random(n_tasks) < 0.25
    propensity = np.where(flat, 0.95, rng.uniform(0.05, 0.4, size=n_tasks))
    return World(
        truth,
        difficulty,
        propensity,
        tuple(f"model-{i}" for i in range(n_models)),
        tuple(f"task-{t:03d}" for t in range(n_tasks)),
    )


def outcome(w: World, task: int, a: int, b: int, rng: np.random.Generator) -> str:
    p = 1 / (1 + 10 ** ((w.truth[b] - w.truth[a]) / 400))
    level = (w.truth[a] + w.truth[b]) / 2
    far = math.exp(-(((level - w.difficulty[task]) / 300) ** 2))
    tie = 1 - (1 - w.propensity[task]) * far
    tie = min(tie, 2 * min(p, 1 - p))  # keeps E[score of a] = p exactly
    u = rng.random()
    if u < tie:
        return "tie"
    return "a" if u < tie + (p - tie / 2) else "b"


def ordered_and_apart(w: World, intervals: list[Interval]) -> bool:
    truth = dict(zip(w.models, w.truth, strict=True))
    ranked = sorted(intervals, key=lambda r: -r.rating)
    return all(
        truth[hi.model] > truth[lo.model] and hi.low > lo.high
        for hi, lo in itertools.pairwise(ranked)
    )


def narrow(intervals: list[Interval], width: float) -> bool:
    return all(r.width <= width for r in intervals)


@dataclass(frozen=True)
class Run:
    matches: int  # matches needed (the cap when never reached)
    reached: bool
    ratings: dict[str, float]
    half_width: dict[str, float]
    played: dict[str, int]  # matches per model


def _run_of(done: list[MatchResult], w: World, reached: bool) -> Run:
    intervals = posterior(w.models, done).intervals()
    return Run(
        len(done),
        reached,
        {r.model: r.rating for r in intervals},
        {r.model: r.width / 2 for r in intervals},
        {r.model: r.matches for r in intervals},
    )


def round_robin(w: World, seed: int, criterion: str, width: float) -> Run:
    rng = np.random.default_rng(seed + 1)
    n = len(w.models)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    done: list[MatchResult] = []
    for t in rng.permutation(len(w.tasks)):
        for k in rng.permutation(len(pairs)):
            i, j = pairs[k] if rng.random() < 0.5 else pairs[k][::-1]
            done.append(MatchResult(w.tasks[t], w.models[i], w.models[j], outcome(w, t, i, j, rng)))  # type: ignore[arg-type]
            if len(done) % CHECK_EVERY == 0 and _met(w, done, criterion, width):
                return _run_of(done, w, True)
    return _run_of(done, w, False)


def _met(w: World, done: list[MatchResult], criterion: str, width: float) -> bool:
    intervals = posterior(w.models, done).intervals()
    return ordered_and_apart(w, intervals) if criterion == "a" else narrow(intervals, width)


def adaptive(w: World, seed: int, criterion: str, width: float) -> Run:
    rng = np.random.default_rng(seed + 2)
    goal = Goal(separate=True) if criterion == "a" else Goal(target_width=width, separate=False)
    done: list[MatchResult] = []
    index = {m: k for k, m in enumerate(w.models)}
    tasks = {t: k for k, t in enumerate(w.tasks)}
    while True:
        picks = next_matches(w.models, w.tasks, done, goal, seed=seed)
        if not picks:  # its own stop rule: the goal holds (or nothing is left to play)
            break
        p = picks[0]
        winner = outcome(w, tasks[p.task], index[p.a], index[p.b], rng)
        done.append(MatchResult(p.task, p.a, p.b, winner))  # type: ignore[arg-type]
    return _run_of(done, w, _met(w, done, criterion, width))


@dataclass(frozen=True)
class SeedResult:
    seed: int
    rr: dict[str, Run]
    ad: dict[str, Run]
    truth: dict[str, float]


def one_seed(seed: int, n_models: int, n_tasks: int, width: float) -> SeedResult:
    w = world(seed, n_models, n_tasks)
    rr = {c: round_robin(w, seed, c, width) for c in ("a", "b")}
    ad = {c: adaptive(w, seed, c, width) for c in ("a", "b")}
    return SeedResult(seed, rr, ad, dict(zip(w.models, map(float, w.truth), strict=True)))


def spread(values: list[float]) -> str:
    q = np.percentile(values, [10, 50, 90])
    return f"{statistics.fmean(values):.2f} (median {q[1]:.2f}, 10-90% {q[0]:.2f}-{q[2]:.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--models", type=int, default=8)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--width", type=float, default=150.0, help="target width for (b)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--replay", type=Path, help="a results file to replay instead")
    parser.add_argument("--write-results", type=Path, help="write seed 0's full round robin")
    args = parser.parse_args()
    console = Console()
    if args.replay is not None:
        for line in replay_summary(args.replay, args.seeds, args.width):
            console.print(line, highlight=False)
        return
    if args.write_results is not None:
        write_round_robin(args.write_results, args.models, args.tasks)
        return
    started = time.monotonic()
    results: list[SeedResult] = []
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with (
        Progress(*columns, TimeElapsedColumn(), console=console) as progress,
        ProcessPoolExecutor(max_workers=args.workers) as pool,
    ):
        bar = progress.add_task("tournaments (seeds)", total=args.seeds)
        futures = [
            pool.submit(one_seed, s, args.models, args.tasks, args.width) for s in range(args.seeds)
        ]
        for future in as_completed(futures):
            results.append(future.result())
            progress.advance(bar)
    results.sort(key=lambda r: r.seed)
    ties = _tie_rate(args)
    console.print(
        f"{args.seeds} seeds, {args.models} models, {args.tasks} tasks (round robin: "
        f"{args.models * (args.models - 1) // 2 * args.tasks} matches), ties {ties:.0%}, "
        f"{time.monotonic() - started:.0f} s"
    )
    table = Table(title="matches needed (mean over seeds)")
    for column in ("criterion", "round robin", "adaptive", "adaptive / round robin", "not reached"):
        table.add_column(column)
    labels = {"a": "(a) adjacent order, 95% apart", "b": f"(b) every interval <= {args.width:g}"}
    for c in ("a", "b"):
        rr = [r.rr[c].matches for r in results]
        ad = [r.ad[c].matches for r in results]
        ratios = [x / y for x, y in zip(ad, rr, strict=True)]
        missed = (
            sum(not r.rr[c].reached for r in results),
            sum(not r.ad[c].reached for r in results),
        )
        table.add_row(
            labels[c],
            f"{statistics.fmean(rr):.0f}",
            f"{statistics.fmean(ad):.0f}",
            spread(ratios),
            f"rr {missed[0]}, adaptive {missed[1]}",
        )
    console.print(table)
    within: list[bool] = []
    by_rank: dict[str, dict[int, list[float]]] = {"ad": {}, "rr": {}}
    played: dict[str, dict[int, list[int]]] = {"ad": {}, "rr": {}}
    for r in results:
        ranked = sorted(r.truth, key=lambda m: -r.truth[m])
        for rank, model in enumerate(ranked):
            e = r.ad["a"].ratings[model] - r.truth[model]
            within.append(abs(e) <= r.rr["a"].half_width[model])
            by_rank["ad"].setdefault(rank, []).append(e)
            by_rank["rr"].setdefault(rank, []).append(r.rr["a"].ratings[model] - r.truth[model])
            played["ad"].setdefault(rank, []).append(r.ad["a"].played[model])
            played["rr"].setdefault(rank, []).append(r.rr["a"].played[model])
    worst = {
        k: max(abs(statistics.fmean(v)) for v in ranks.values()) for k, ranks in by_rank.items()
    }
    rms = {
        k: math.sqrt(statistics.fmean(e * e for v in ranks.values() for e in v))
        for k, ranks in by_rank.items()
    }
    console.print(
        f"bias at (a): {statistics.fmean(within):.1%} of adaptive ratings lie within the round"
        f" robin's interval half-width of the truth; largest mean signed error at any true"
        f" rank: adaptive {worst['ad']:.1f}, round robin {worst['rr']:.1f} points; RMS error"
        f" adaptive {rms['ad']:.1f}, round robin {rms['rr']:.1f}"
    )
    ranks = Table(title="at (a), by true rank: mean signed error (points) and matches played")
    for column in ("true rank", "adaptive error", "adaptive matches", "rr error", "rr matches"):
        ranks.add_column(column)
    for rank in sorted(by_rank["ad"]):
        ranks.add_row(
            str(rank + 1),
            f"{statistics.fmean(by_rank['ad'][rank]):+.1f}",
            f"{statistics.fmean(played['ad'][rank]):.0f}",
            f"{statistics.fmean(by_rank['rr'][rank]):+.1f}",
            f"{statistics.fmean(played['rr'][rank]):.0f}",
        )
    console.print(ranks)


def write_round_robin(path: Path, n_models: int, n_tasks: int) -> None:
    """Every match of seed 0's world, as a results file (one JSON object per line)."""
    w = world(0, n_models, n_tasks)
    rng = np.random.default_rng(1)
    with path.open("w") as out:
        for t, task in enumerate(w.tasks):
            for i in range(len(w.models)):
                for j in range(i + 1, len(w.models)):
                    winner = outcome(w, t, i, j, rng)
                    record = {"task": task, "a": w.models[i], "b": w.models[j], "winner": winner}
                    out.write(json.dumps(record) + "\n")


def _tie_rate(args: argparse.Namespace) -> float:
    w = world(0, args.models, args.tasks)
    rng = np.random.default_rng(0)
    n = len(w.models)
    draws = [
        outcome(w, t, i, j, rng)
        for t in range(len(w.tasks))
        for i in range(n)
        for j in range(i + 1, n)
    ]
    return draws.count("tie") / len(draws)


if __name__ == "__main__":
    main()
