"""`arena ratings`: the leaderboard from a JSONL of match results."""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from arena.cli.exits import BAD_INPUT, fail, stderr

if TYPE_CHECKING:
    from arena.ratings.results import RoundResult


def _anchor(value: str | None) -> tuple[str, float] | None:
    if value is None:
        return None
    model, _, number = value.rpartition("=")
    try:
        return model, float(number)
    except ValueError:
        fail(BAD_INPUT, f"--anchor must be MODEL=VALUE, got {value!r}")


def _fmt(value: float | None, digits: int = 0) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def ratings(
    results: Annotated[
        Path, typer.Option("--results", help="JSONL: {task, a, b, winner[, language]}")
    ],
    as_json: Annotated[bool, typer.Option("--json")] = False,
    bootstrap: Annotated[
        int, typer.Option(help="bootstrap rounds (tasks resampled)", min=10)
    ] = 1000,
    seed: Annotated[int, typer.Option(help="bootstrap seed")] = 0,
    anchor: Annotated[str | None, typer.Option(help="pin MODEL=VALUE instead of mean 1000")] = None,
    elo_k: Annotated[float, typer.Option(help="K of the online Elo view", min=0)] = 32.0,
) -> None:
    """Bradley-Terry ratings with 95% task-bootstrap intervals, rank (UB), Elo and W/L/T."""
    from arena.ratings import leaderboard, win_fractions  # numpy and scipy: only when needed
    from arena.ratings.results import parse_results_lines

    try:
        lines = results.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        fail(BAD_INPUT, f"cannot read {results}: {exc}")
    parsed = parse_results_lines(lines)
    if parsed.errors:
        for error in parsed.errors[:20]:
            stderr.print(f"[red]{results}: {error}[/]", highlight=False)
        fail(BAD_INPUT, f"{len(parsed.errors)} bad line(s) in {results}")
    if parsed.failed:
        stderr.print(
            f"[yellow]{parsed.failed} failed match(es) in {results} are left out of the ratings[/]",
            highlight=False,
        )
    if len(parsed.matches) == 0:
        fail(BAD_INPUT, f"{results} holds no match results")
    pinned = _anchor(anchor)
    if pinned is not None and pinned[0] not in parsed.matches.models:
        fail(BAD_INPUT, f"--anchor: no results for model {pinned[0]!r}")
    with Progress(console=stderr, transient=True) as progress:
        bar = progress.add_task("bootstrap", total=bootstrap)
        rows, fit = leaderboard(
            parsed.matches,
            bootstrap,
            seed,
            pinned,
            elo_k,
            lambda n: progress.update(bar, completed=n),
        )
    for warning in fit.warnings:
        stderr.print(f"[yellow]warning:[/] {warning}", highlight=False)
    if as_json:
        keys = (
            "model",
            "rating",
            "ci_low",
            "ci_high",
            "rank_ub",
            "matches",
            "wins",
            "losses",
            "ties",
            "elo",
        )
        print(json.dumps([{k: asdict(r)[k] for k in keys} for r in rows], indent=2))
        return
    console = Console()
    table = Table(
        title=f"Bradley-Terry ratings ({len(parsed.matches)} matches, "
        f"{bootstrap} task-bootstrap rounds)"
    )
    for column in ("rank (UB)", "model", "rating", "95% CI", "matches", "W/L/T", "Elo"):
        table.add_column(column)
    for r in rows:
        mark = " *" if r.prior_bounded else ""
        ci = f"{_fmt(r.ci_low)} .. {_fmt(r.ci_high)}" if r.rating is not None else "-"
        table.add_row(
            str(r.rank_ub or "-"),
            r.model + mark,
            _fmt(r.rating),
            ci,
            str(r.matches),
            f"{r.wins}/{r.losses}/{r.ties}",
            _fmt(r.elo),
        )
    console.print(table)
    if any(r.prior_bounded for r in rows):
        console.print("* bounded only by a weak prior (see the warnings)")
    _print_matrix(console, parsed.matches.models, win_fractions(parsed.matches))
    if parsed.rounds:
        _print_rounds(console, parsed.rounds)


def _print_matrix(console: Console, models: tuple[str, ...], fractions: Any) -> None:
    if len(models) > 12:
        return
    table = Table(title="win fraction of row against column (ties excluded)")
    table.add_column("")
    for m in models:
        table.add_column(m)
    for i, m in enumerate(models):
        table.add_row(m, *(_fmt(float(fractions[i][j]), 2) for j in range(len(models))))
    console.print(table)


def _print_rounds(console: Console, rounds: tuple[RoundResult, ...]) -> None:
    from arena.ratings import rates_by_model_and_language, role_ratings

    by_model, _ = role_ratings(rounds)
    table = Table(title="role ratings (each round: submitter vs reviewer)")
    for column in ("model", "submitter", "reviewer"):
        table.add_column(column)
    for model, (sub, rev) in sorted(by_model.items(), key=lambda kv: -kv[1][0]):
        table.add_row(model, _fmt(sub), _fmt(rev))
    console.print(table)
    rates = Table(title="rates per model and language")
    for column in ("model", "language", "rounds", "patch correct", "tests valid", "catch", "draw"):
        rates.add_column(column)
    for r in rates_by_model_and_language(rounds):
        rates.add_row(
            r.model,
            r.language,
            str(r.rounds),
            *(_fmt(x, 2) for x in (r.patch_correct, r.tests_valid, r.catch, r.draw)),
        )
    console.print(rates)
