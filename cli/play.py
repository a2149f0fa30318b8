"""`arena play` (one match) and `arena tournament` (every pair on every task)."""

from __future__ import annotations

import itertools
import json
import os
import threading
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from cli.exits import BAD_INPUT, exit_on_errors, fail, stderr
from cli.options import (
    MaxMatchesOption,
    MaxModelMatchesOption,
    Mode,
    ModelsFileOption,
    ModeOption,
    TargetWidthOption,
    TasksOption,
)

EvidenceOption = Annotated[
    Path | None,
    typer.Option("--evidence", help="directory for each match's full evidence (JSON)"),
]

if TYPE_CHECKING:
    from arena.match import MatchFailure, MatchRecord
    from arena.players.base import Player
    from arena.ratings.stopping import Budget, Goal
    from arena.tasks.schema import Task


# The engine (Docker, retrieval, players) is imported inside the commands that use it, so
# that every other command starts fast.


def _players(names: list[str], models_file: Path | None) -> list[Player]:
    from arena.players.registry import ModelSpec, build_player, load_models_file
    from arena.settings import PlayerSettings

    models: dict[str, ModelSpec] = load_models_file(models_file) if models_file else {}
    cap = PlayerSettings().max_answer_bytes
    players = [build_player(name, models, os.environ, cap) for name in names]
    if len({p.name for p in players}) != len(players):
        fail(BAD_INPUT, f"a model cannot meet itself: {', '.join(names)}")
    return players


def render_match(console: Console, record: MatchRecord) -> None:
    for number, r in enumerate(record.rounds, start=1):
        console.rule(f"round {number}: {r.submitter} submits, {r.reviewer} reviews")
        table = Table(show_header=True)
        table.add_column("fact")
        table.add_column("holds")
        table.add_column("evidence")
        for fact in ("patch_applies", "patch_correct", "tests_valid", "tests_catch"):
            holds = getattr(r, fact)
            table.add_row(fact, "[green]yes[/]" if holds else "[red]no[/]", r.reasons[fact])
        console.print(table)
        for label, answer in (("patch", r.patch), ("tests", r.tests)):
            if answer.failure:
                console.print(
                    f"{label}: no answer ({answer.failure})", markup=False, highlight=False
                )
        winner = r.winner_model or "draw"
        console.print(f"verdict: [bold]{winner}[/] ({r.winner.value})")
    console.rule("match")
    scores = ", ".join(f"{m} {s}" for m, s in record.score.items())
    console.print(f"score: {scores}; result: [bold]{record.result}[/]")


def play(
    task: Annotated[str, typer.Option("--task", help="instance id")],
    a: Annotated[str, typer.Option("--a", help="model A (submits first)")],
    b: Annotated[str, typer.Option("--b", help="model B")],
    tasks: TasksOption = "demo",
    models_file: ModelsFileOption = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    evidence: EvidenceOption = None,
) -> None:
    """Play one match: two rounds on one task, roles swapped."""
    from arena.runtime import open_runtime
    from arena.tasks.sources import find_task, load_tasks
    from ci_runner import CISettings

    with exit_on_errors():
        players = _players([a, b], models_file)
        with open_runtime(CISettings()) as runtime:
            chosen = find_task(
                task, load_tasks(tasks, runtime.settings.cache_dir, runtime.workspaces)
            )
            with stderr.status(f"preparing {chosen.instance_id} (validation, retrieval)") as status:
                prepared = runtime.arena.prepare(chosen)
                status.update(f"playing {a} vs {b} on {chosen.instance_id}")
                record = runtime.arena.play_match(prepared, players[0], players[1])
    if evidence is not None:
        _write_evidence(evidence, record)
    if as_json:
        print(json.dumps(record.summary(), indent=2))
    else:
        render_match(Console(), record)


def standings(
    records: list[MatchRecord], failures: list[MatchFailure], names: list[str]
) -> list[dict[str, Any]]:
    counts: dict[str, Counter[str]] = {n: Counter() for n in names}
    for record in records:
        for model in (record.a, record.b):
            key = "tie" if record.result == "tie" else ("win" if record.result == model else "loss")
            counts[model][key] += 1
            counts[model]["rounds"] += record.score[model]
    for failure in failures:
        for model in (failure.a, failure.b):
            counts[model]["failed"] += 1
    rows = [
        {
            "model": n,
            "wins": c["win"],
            "losses": c["loss"],
            "ties": c["tie"],
            "round_wins": c["rounds"],
            "failed": c["failed"],
        }
        for n, c in counts.items()
    ]
    return sorted(rows, key=lambda r: (-r["wins"] - 0.5 * r["ties"], -r["round_wins"], r["model"]))


def _preparation_failed(task: Task, a: str, b: str, exc: Exception) -> MatchFailure:
    """The failure of a match between `a` and `b` whose task could not be prepared (an
    engine fault, say): failed, with whoever is at fault, never lost or skipped."""
    from arena.faults import fault_of
    from arena.match import MatchFailure

    return MatchFailure(
        task=task.instance_id,
        language=task.language.value,
        kind=task.kind,
        a=a,
        b=b,
        reason=f"preparing the task failed: {exc}",
        fault=fault_of(exc).component,
    )


def _report_failures(failures: list[MatchFailure]) -> None:
    """Loud, so a dead endpoint is never mistaken for a model that answered nothing."""
    if not failures:
        return
    stderr.print(f"[bold red]{len(failures)} match(es) failed and are left out of the standings[/]")
    from arena.faults import models_at_fault

    for blamed in models_at_fault(failures):
        stderr.print(
            f"[bold red]model {escape(blamed.model)}'s endpoint is at fault in"
            f" {blamed.matches} match(es);[/] last: {escape(blamed.last_reason)}",
            highlight=False,
        )
    for failure in failures:
        if not failure.at_fault:
            stderr.print(
                f"[red]failed:[/] {escape(failure.task)} {escape(failure.a)} vs "
                f"{escape(failure.b)}: {escape(failure.reason)}",
                highlight=False,
            )


def tournament(
    models: Annotated[str, typer.Option("--models", help="comma-separated model names")],
    tasks: TasksOption = "demo",
    models_file: ModelsFileOption = None,
    results: Annotated[
        Path | None,
        typer.Option("--results", help="append match results as JSONL (for `arena ratings`)"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    evidence: EvidenceOption = None,
    jobs: Annotated[int, typer.Option("--jobs", min=1, help="matches played at once")] = 1,
    mode: ModeOption = Mode.ROUND_ROBIN,
    target_width: TargetWidthOption = None,
    max_matches: MaxMatchesOption = None,
    max_seconds: Annotated[
        float | None,
        typer.Option("--max-seconds", min=1.0, help="adaptive: budget of summed match time"),
    ] = None,
    max_model_matches: MaxModelMatchesOption = None,
    seed: Annotated[int, typer.Option("--seed", help="adaptive: tie-break seed")] = 0,
) -> None:
    """Play every pair of models on every valid task (or, with --mode adaptive, only the
    matches that most narrow neighbouring intervals), then print the standings."""
    if mode is Mode.ADAPTIVE:
        from arena.ratings.stopping import Budget, Goal

        budget = Budget(
            matches=max_matches, seconds=max_seconds, per_model_matches=max_model_matches
        )
        goal = Goal(target_width=target_width)
        _adaptive_tournament(
            models, tasks, models_file, results, as_json, evidence, jobs, goal, budget, seed
        )
        return
    if any(x is not None for x in (target_width, max_matches, max_seconds, max_model_matches)):
        fail(BAD_INPUT, "--target-width and the --max-* budgets need --mode adaptive")
    from arena.faults import fault_of
    from arena.match import MatchFailed, MatchFailure, PreparedTask
    from arena.runtime import open_runtime
    from arena.tasks.schema import TaskError
    from arena.tasks.sources import load_tasks
    from ci_runner import CISettings

    names = [n.strip() for n in models.split(",") if n.strip()]
    if len(names) < 2:
        fail(BAD_INPUT, "--models needs at least two names")
    records: list[MatchRecord] = []
    failures: list[MatchFailure] = []
    skipped: list[str] = []
    with exit_on_errors():
        players = _players(names, models_file)
        with open_runtime(CISettings()) as runtime:
            found = load_tasks(tasks, runtime.settings.cache_dir, runtime.workspaces)
            pairs = list(itertools.combinations(players, 2))
            columns = (
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
            )
            written = threading.Lock()

            def keep(outcome: MatchRecord | MatchFailure) -> None:
                with written:
                    if isinstance(outcome, MatchFailure):
                        failures.append(outcome)
                    else:
                        records.append(outcome)
                        if evidence is not None:
                            _write_evidence(evidence, outcome)
                    if results is not None:
                        with results.open("a") as handle:
                            handle.write(json.dumps(outcome.summary()) + "\n")

            def play(prepared: PreparedTask, a: Player, b: Player) -> None:
                """Any exception fails this match alone; the tournament goes on."""
                task = prepared.task
                try:
                    keep(runtime.arena.play_match(prepared, a, b))
                except Exception as exc:  # recorded with its reason, never lost
                    fault = exc.fault if isinstance(exc, MatchFailed) else fault_of(exc)
                    reason = (
                        str(exc) if isinstance(exc, MatchFailed) else f"{type(exc).__name__}: {exc}"
                    )
                    keep(
                        MatchFailure(
                            task=task.instance_id,
                            language=task.language.value,
                            kind=prepared.validation.kind,
                            a=a.name,
                            b=b.name,
                            reason=reason,
                            fault=fault.component,
                            at_fault=fault.model,
                        )
                    )

            with (
                Progress(*columns, console=stderr) as progress,
                ThreadPoolExecutor(max_workers=jobs) as pool,
            ):
                bar = progress.add_task("tournament", total=len(found) * len(pairs))
                futures: list[Future[None]] = []
                for task in found:
                    progress.update(bar, description=f"{task.instance_id}: preparing")
                    try:
                        prepared: PreparedTask = runtime.arena.prepare(task)
                    except TaskError as exc:
                        skipped.append(str(exc))
                        progress.advance(bar, len(pairs))
                        continue
                    except Exception as exc:  # an engine fault fails this task's matches
                        for a, b in pairs:
                            keep(_preparation_failed(task, a.name, b.name, exc))
                        progress.advance(bar, len(pairs))
                        continue
                    progress.update(bar, description=f"playing ({jobs} at once)")
                    for a, b in pairs:
                        future = pool.submit(play, prepared, a, b)
                        future.add_done_callback(lambda _: progress.advance(bar))
                        futures.append(future)
                for future in futures:
                    future.result()
    _print_standings(records, failures, skipped, names, as_json)


def _print_standings(
    records: list[MatchRecord],
    failures: list[MatchFailure],
    skipped: list[str],
    names: list[str],
    as_json: bool,
    extra: dict[str, Any] | None = None,
) -> None:
    table_rows = standings(records, failures, names)
    if as_json:
        print(
            json.dumps(
                {
                    "standings": table_rows,
                    "matches": len(records),
                    "failed": [f.summary() for f in failures],
                    "skipped": skipped,
                    **(extra or {}),
                },
                indent=2,
            )
        )
        _report_failures(failures)
        return
    for reason in skipped:
        stderr.print(f"[yellow]skipped:[/] {escape(reason)}", highlight=False)
    _report_failures(failures)
    title = f"standings after {len(records)} matches"
    if failures:
        title += f" ({len(failures)} failed)"
    table = Table(title=title)
    for column in ("model", "wins", "losses", "ties", "round wins", "failed"):
        table.add_column(column)
    for row in table_rows:
        table.add_row(
            escape(row["model"]),
            *(str(row[k]) for k in ("wins", "losses", "ties", "round_wins", "failed")),
        )
    Console().print(table)


def _adaptive_tournament(
    models: str,
    tasks: str,
    models_file: Path | None,
    results: Path | None,
    as_json: bool,
    evidence: Path | None,
    jobs: int,
    goal: Goal,
    budget: Budget,
    seed: int,
) -> None:
    """Matches chosen one by one by the pairing engine (`cli.adaptive`)."""
    from arena.faults import fault_of
    from arena.match import MatchFailed, MatchFailure, PreparedTask
    from arena.ratings.pairing import Scheduled
    from arena.runtime import open_runtime
    from arena.tasks.schema import TaskError
    from arena.tasks.sources import load_tasks
    from ci_runner import CISettings
    from cli.adaptive import Status, run_adaptive

    names = [n.strip() for n in models.split(",") if n.strip()]
    if len(names) < 2:
        fail(BAD_INPUT, "--models needs at least two names")
    skipped: list[str] = []
    with exit_on_errors():
        players = {p.name: p for p in _players(names, models_file)}
        with open_runtime(CISettings()) as runtime:
            found = {
                t.instance_id: t
                for t in load_tasks(tasks, runtime.settings.cache_dir, runtime.workspaces)
            }
            prepared: dict[str, PreparedTask | Exception] = {}
            preparing = threading.Lock()
            written = threading.Lock()

            def prepare(task_id: str) -> PreparedTask | Exception:
                with preparing:  # each task once, whichever match needs it first
                    if task_id not in prepared:
                        try:
                            prepared[task_id] = runtime.arena.prepare(found[task_id])
                        except Exception as exc:  # TaskError: skipped; else: its matches fail
                            prepared[task_id] = exc
                    return prepared[task_id]

            def play(match: Scheduled) -> MatchRecord | MatchFailure | None:
                """Any exception fails this match alone; the tournament goes on."""
                task = found[match.task]
                ready = prepare(match.task)
                outcome: MatchRecord | MatchFailure
                if isinstance(ready, TaskError):
                    with written:
                        if str(ready) not in skipped:  # once, however many matches needed it
                            skipped.append(str(ready))
                    return None
                if isinstance(ready, Exception):
                    outcome = _preparation_failed(task, match.a, match.b, ready)
                else:
                    try:
                        outcome = runtime.arena.play_match(
                            ready, players[match.a], players[match.b]
                        )
                    except Exception as exc:  # recorded with its reason, never lost
                        fault = exc.fault if isinstance(exc, MatchFailed) else fault_of(exc)
                        outcome = MatchFailure(
                            task=match.task,
                            language=task.language.value,
                            kind=ready.validation.kind,
                            a=match.a,
                            b=match.b,
                            reason=str(exc)
                            if isinstance(exc, MatchFailed)
                            else f"{type(exc).__name__}: {exc}",
                            fault=fault.component,
                            at_fault=fault.model,
                        )
                with written:
                    if evidence is not None and not isinstance(outcome, MatchFailure):
                        _write_evidence(evidence, outcome)
                    if results is not None:
                        with results.open("a") as handle:
                            handle.write(json.dumps(outcome.summary()) + "\n")
                return outcome

            columns = (TextColumn("{task.description}"), MofNCompleteColumn(), TimeElapsedColumn())
            with Progress(*columns, console=stderr) as progress:
                bar = progress.add_task("adaptive: starting", total=budget.matches)

                def show(status: Status) -> None:
                    progress.update(
                        bar,
                        completed=status.used.matches,
                        description=f"adaptive: {escape(status.line())}",
                    )

                run = run_adaptive(
                    names, list(found), play, goal, budget, jobs=jobs, seed=seed, on_status=show
                )
    status = run.status
    extra = {
        "mode": "adaptive",
        "stop": run.stop.value,
        "widest_open_interval": status.widest,
        "target_width": goal.target_width,
        "estimated_matches_to_finish": status.to_finish,
        "budget_left": status.left,
    }
    if not as_json:
        stderr.print(f"[bold]stopped:[/] {run.stop.value}; {escape(status.line())}")
    _print_standings(run.records, run.failures, skipped, names, as_json, extra)


def _write_evidence(directory: Path, record: MatchRecord) -> None:
    """Everything about a match: answers, diffs, every CI run with its logs, the verdicts."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{record.task}__{record.a}__vs__{record.b}.json"
    path.write_text(record.model_dump_json(indent=2))
