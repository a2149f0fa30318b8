"""`arena ratings`: the leaderboard from a JSONL of match results.

A thin driver: it reads the file into the engine's match records and shows the board that
`arena.ratings.build_board` makes of them, the same board the service stores and serves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from cli.exits import BAD_INPUT, fail, stderr

if TYPE_CHECKING:
    from arena.ratings import Board, HeadToHead, RoundResult


def _anchor(value: str | None) -> tuple[str, float] | None:
    if value is None:
        return None
    model, _, number = value.rpartition("=")
    try:
        return model, float(number)
    except ValueError:
        fail(BAD_INPUT, f"--anchor must be MODEL=VALUE, got {value!r}")


def _fmt(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _rate(value: float | None, chances: int) -> str:
    """A rate with its denominator; none at all is said, never shown as 0 or nan."""
    return "no chances" if value is None else f"{value:.2f} of {chances}"


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
    language: Annotated[
        str | None, typer.Option(help="only matches on tasks of this language")
    ] = None,
    kind: Annotated[
        str | None, typer.Option(help="only matches on tasks of this kind (gold-judged...)")
    ] = None,
) -> None:
    """Bradley-Terry ratings with 95% intervals, rank (UB), Elo, W/L/T, role ratings, rates."""
    from arena.ratings import build_board, head_to_head, tallies  # numpy, scipy: when needed
    from arena.ratings.results_file import parse_results_lines

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
    matches = [
        m
        for m in parsed.matches
        if (language is None or m.language == language) and (kind is None or m.kind == kind)
    ]
    if not matches:
        fail(BAD_INPUT, f"{results} holds no match results" + (" of that scope" if (
            language or kind) else ""))  # fmt: skip
    pinned = _anchor(anchor)
    if pinned is not None and pinned[0] not in {m.a for m in matches} | {m.b for m in matches}:
        fail(BAD_INPUT, f"--anchor: no results for model {pinned[0]!r}")
    with Progress(console=stderr, transient=True) as progress:
        bar = progress.add_task("bootstrap", total=bootstrap)
        board = build_board(
            matches, bootstrap, seed, pinned, elo_k, lambda n: progress.update(bar, completed=n)
        )
    for warning in board.warnings:
        stderr.print(f"[yellow]warning:[/] {warning}", highlight=False)
    if as_json:
        print(json.dumps([r.model_dump(mode="json") for r in board.rows], indent=2))
        return
    console = Console()
    _print_board(console, board, bootstrap)
    _print_matrix(console, head_to_head(tallies(matches)))
    rounds = tuple(r for m in matches for r in m.rounds)
    if rounds:
        _print_roles(console, board)
        _print_rates(console, rounds)


def _print_board(console: Console, board: Board, bootstrap: int) -> None:
    from arena.ratings import PRIOR_TIES, PROVISIONAL_MATCHES

    table = Table(
        title=f"Bradley-Terry ratings ({board.match_count} matches, "
        f"{bootstrap} task-bootstrap rounds)"
    )
    for column in ("rank (UB)", "model", "rating", "95% CI", "matches", "W/L/T", "Elo"):
        table.add_column(column)
    for r in board.rows:
        mark = (" *" if r.prior_bounded else "") + (" (provisional)" if r.provisional else "")
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
    if any(r.prior_bounded for r in board.rows):
        console.print(
            f"* won or lost every comparison: rating and interval come from the prior "
            f"({PRIOR_TIES:g} virtual tie against an average model; see the warnings)"
        )
    if any(r.provisional for r in board.rows):
        console.print(f"provisional: fewer than {PROVISIONAL_MATCHES} matches")


def _print_matrix(console: Console, found: HeadToHead) -> None:
    if len(found.models) > 12:
        return
    table = Table(title="win fraction of row against column (ties excluded)")
    table.add_column("")
    for m in found.models:
        table.add_column(m)
    for m, row in zip(found.models, found.win_fraction, strict=True):
        table.add_row(m, *(_fmt(x, 2) for x in row))
    console.print(table)


def _print_roles(console: Console, board: Board) -> None:
    table = Table(title="role ratings (each round: submitter vs reviewer)")
    for column in ("model", "submitter", "reviewer"):
        table.add_column(column)
    rows = sorted(board.rows, key=lambda r: (r.submitter is None, -(r.submitter or 0.0)))
    for r in rows:
        table.add_row(r.model, _fmt(r.submitter), _fmt(r.reviewer))
    console.print(table)


def _print_rates(console: Console, rounds: tuple[RoundResult, ...]) -> None:
    from arena.ratings import rates_by_model_and_language

    table = Table(title="rates per model and language (share of its chances)")
    for column in ("model", "language", "rounds", "patch correct", "tests valid", "catch", "draw"):
        table.add_column(column)
    for r in rates_by_model_and_language(rounds):
        c = r.counts
        table.add_row(
            r.model,
            r.language,
            str(c.rounds),
            _rate(c.patch_correct, c.submitted),
            _rate(c.tests_valid, c.reviewed),
            _rate(c.catch, c.wrong_patches),
            _rate(c.draw, c.rounds),
        )
    console.print(table)
