"""The service from the command line: `arena db migrate`, `worker`, `submit`, `status`, `cancel`."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from arena.vocabulary import OPEN_MATCH, MatchStatus, Queue, TaskName
from cli.exits import BAD_INPUT, INFRASTRUCTURE, exit_on_errors, fail, stderr
from cli.options import (
    MaxMatchesOption,
    MaxModelMatchesOption,
    Mode,
    ModelsFileOption,
    ModeOption,
    TargetWidthOption,
    TasksOption,
)

if TYPE_CHECKING:
    from arena.ratings.board import BoardRow
    from arena.store.settings import ServiceSettings

db = typer.Typer(no_args_is_help=True, help="The service's PostgreSQL store.")

# psycopg, Celery and the engine are imported inside the commands that use them.


def _settings() -> ServiceSettings:
    from arena.store.settings import ServiceSettings

    return ServiceSettings()


@contextmanager
def _pool(settings: ServiceSettings) -> Iterator[Any]:
    """The store's pool for one command, closed when it ends (its connections and threads go
    with it even when the command runs inside a longer-lived process, as tests run it)."""
    import psycopg_pool

    from arena.store.pool import open_pool

    try:
        pool = open_pool(settings.database_url, max_size=2)
    except psycopg_pool.PoolTimeout as exc:
        fail(INFRASTRUCTURE, f"cannot reach PostgreSQL at ARENA_DATABASE_URL: {exc}")
    try:
        yield pool
    finally:
        pool.close()


@db.command("migrate")
def migrate() -> None:
    """Apply the schema migrations that are missing (a second run applies nothing)."""
    import psycopg

    from arena.store.migrate import migrate as apply

    try:
        applied = apply(_settings().database_url)
    except psycopg.OperationalError as exc:
        fail(INFRASTRUCTURE, f"cannot reach PostgreSQL at ARENA_DATABASE_URL: {exc}")
    print(f"applied: {', '.join(applied)}" if applied else "the schema is up to date")


def worker(
    queues: Annotated[str, typer.Option("--queues", help="comma-separated: control, llm, ci")] = (
        "control,llm,ci"
    ),
    concurrency: Annotated[int, typer.Option("--concurrency", min=1)] = 2,
    pool: Annotated[
        str, typer.Option("--pool", help="threads (default), prefork or solo: Celery's pools")
    ] = "threads",
) -> None:
    """Start a Celery worker on some queues (migrating the store first)."""
    from arena.store.migrate import migrate as apply

    wanted = [q.strip() for q in queues.split(",") if q.strip()]
    unknown = sorted(set(wanted) - {q.value for q in Queue})
    if unknown or not wanted:
        fail(BAD_INPUT, f"--queues: unknown queue(s) {', '.join(unknown) or '(none given)'}")
    from arena.tasks.demo import commit_demo_repos
    from ci_runner import CISettings

    settings, ci = _settings(), CISettings()  # read once, for everything this worker does
    apply(settings.database_url)
    commit_demo_repos(ci.cache_dir)
    if Queue.CI.value in wanted:  # sandboxes of a CI worker that was killed on this host
        from ci_runner.errors import SandboxError
        from ci_runner.providers import provider_for

        try:
            provider_for(ci).sweep()
        except SandboxError as exc:  # another sweep got there first
            stderr.print(f"[yellow]warning:[/] sweeping dead sandboxes: {exc}", highlight=False)
    from celery.utils.nodenames import host_format

    from arena.scrub import scrubbed_logs
    from workers.app import app, secrets
    from workers.watchdog import watch

    # a solo pool runs each step on the event loop's thread: the loop is silent meanwhile
    watch(settings.worker_down_s + (settings.hard_time_limit_s if pool == "solo" else 0))
    # the worker itself, not app.worker_main: that one drops the worker's exit code
    celery_worker = app.Worker(
        hostname=host_format(f"arena-{'-'.join(wanted)}-{os.getpid()}@%h"),  # as Celery's CLI
        queues=wanted,
        concurrency=concurrency,
        pool_cls=pool,
        loglevel="INFO",
        without_gossip=True,
        without_mingle=True,
    )
    with scrubbed_logs(secrets):  # Celery logs a step's exception: no known secret in it
        celery_worker.start()
    if celery_worker.exitcode:  # e.g. an unrecoverable consumer error: be restarted
        raise typer.Exit(celery_worker.exitcode)


def submit(
    models: Annotated[str, typer.Option("--models", help="comma-separated model names")],
    tasks: TasksOption = "demo",
    models_file: ModelsFileOption = None,
    mode: ModeOption = Mode.ROUND_ROBIN,
    target_width: TargetWidthOption = None,
    max_matches: MaxMatchesOption = None,
    max_model_matches: MaxModelMatchesOption = None,
    max_ci_hours: Annotated[
        float | None, typer.Option("--max-ci-hours", min=0.001, help="adaptive: CI time budget")
    ] = None,
    max_tokens: Annotated[
        int | None, typer.Option("--max-tokens", min=1, help="adaptive: model token budget")
    ] = None,
    max_money: Annotated[
        float | None,
        typer.Option("--max-money", min=0.0, help="adaptive: USD at the models' prices"),
    ] = None,
    max_model_ci_hours: Annotated[
        float | None,
        typer.Option("--max-model-ci-hours", min=0.001, help="adaptive: CI time per model"),
    ] = None,
    max_model_tokens: Annotated[
        int | None, typer.Option("--max-model-tokens", min=1, help="adaptive: tokens per model")
    ] = None,
    max_model_money: Annotated[
        float | None,
        typer.Option("--max-model-money", min=0.0, help="adaptive: USD per model, at its prices"),
    ] = None,
    in_flight: Annotated[
        int, typer.Option("--in-flight", min=1, help="adaptive: matches played at once")
    ] = 4,
) -> None:
    """Record a tournament in the store and enqueue it; prints its id. With --mode adaptive
    the workers schedule its matches a few at a time until the goal or a budget is reached
    (the same engine as `arena tournament --mode adaptive`)."""
    budgets = (
        *(target_width, max_matches, max_model_matches, max_ci_hours, max_tokens, max_money),
        *(max_model_ci_hours, max_model_tokens, max_model_money),
    )
    if mode is Mode.ROUND_ROBIN and any(x is not None for x in budgets):
        fail(BAD_INPUT, "--target-width and the --max-* budgets need --mode adaptive")
    adaptive = None
    if mode is Mode.ADAPTIVE:
        from dataclasses import asdict

        from arena.ratings.stopping import Budget, Goal

        def seconds(hours: float | None) -> float | None:
            return None if hours is None else hours * 3600

        budget = Budget(
            matches=max_matches,
            seconds=seconds(max_ci_hours),
            tokens=max_tokens,
            per_model_matches=max_model_matches,
            money=max_money,
            per_model_seconds=seconds(max_model_ci_hours),
            per_model_tokens=max_model_tokens,
            per_model_money=max_model_money,
        )
        adaptive = {  # stored as the API stores it: the caps set, CI time in seconds
            "goal": asdict(Goal(target_width=target_width)),
            "budget": {k: v for k, v in asdict(budget).items() if v is not None},
            "in_flight": in_flight,
        }
    from arena.players.registry import load_models_file, stored_spec
    from arena.store.tournaments import create_tournament
    from arena.tasks.sources import load_tasks
    from ci_runner import CISettings
    from ci_runner.workspace import Workspaces

    names = [n.strip() for n in models.split(",") if n.strip()]
    if len(names) < 2 or len(set(names)) != len(names):
        fail(BAD_INPUT, "--models needs at least two different names")
    with exit_on_errors():
        specs = load_models_file(models_file) if models_file else {}
        stored = {name: stored_spec(name, specs.get(name)) for name in names}
    settings = _settings()
    rule = settings.key_env_rule()  # workers read a key only from a variable it allows
    for name, spec in stored.items():
        key_env = spec.get("api_key_env")
        if key_env and not rule.allows(key_env):
            fail(BAD_INPUT, f"model {name}: {key_env} may not be read: {rule.rule()}")
    ci = CISettings()
    found = load_tasks(tasks, ci.cache_dir, Workspaces.from_settings(ci))
    if not found:
        fail(BAD_INPUT, f"--tasks {tasks}: no tasks")
    with _pool(settings) as pool:
        tournament_id = create_tournament(pool, stored, found, tasks, adaptive=adaptive)
    from arena.queues import celery_app

    # the workers' configuration: a publish waits for the broker
    with celery_app(settings) as app:
        app.send_task(TaskName.SCHEDULE.value, args=(tournament_id,), queue=Queue.CONTROL.value)
    print(tournament_id)


def _leaderboard_table(rows: Sequence[BoardRow], title: str) -> Table:
    table = Table(title=title)
    for column in ("model", "rating", "95% CI", "W/L/T", "Elo"):
        table.add_column(column)
    for r in rows:
        rating = "-" if r.rating is None else f"{r.rating:.0f}"
        ci = "-" if r.ci_low is None or r.ci_high is None else f"{r.ci_low:.0f} .. {r.ci_high:.0f}"
        wlt = f"{r.wins}/{r.losses}/{r.ties}"
        table.add_row(r.model + (" (provisional)" if r.provisional else ""), rating, ci, wlt,
                      f"{r.elo:.0f}")  # fmt: skip
    return table


def status(
    tournament_id: Annotated[int, typer.Argument(help="the id `arena submit` printed")],
    follow: Annotated[bool, typer.Option("--follow/--no-follow", help="until it ends")] = True,
    as_json: Annotated[bool, typer.Option("--json", help="one snapshot as JSON")] = False,
) -> None:
    """Live progress (done, running, failed, queued), then the leaderboard from the snapshot."""
    with _pool(_settings()) as pool:
        _show_status(pool, tournament_id, follow, as_json)


def _show_status(pool: Any, tournament_id: int, follow: bool, as_json: bool) -> None:
    from arena.store.snapshots import latest_snapshot
    from arena.store.tournaments import UnknownTournament, tournament_progress

    try:
        progress = tournament_progress(pool, tournament_id)
    except UnknownTournament as exc:
        fail(BAD_INPUT, str(exc))
    if as_json:
        snapshot = latest_snapshot(pool, tournament_id)
        print(
            json.dumps(
                {
                    "id": tournament_id,
                    "status": progress.status,
                    "matches": progress.counts,
                    "leaderboard": None
                    if snapshot is None
                    else [r.model_dump(mode="json") for r in snapshot.rows],
                    "leaderboard_matches": None if snapshot is None else snapshot.match_count,
                },
                indent=2,
            )
        )
        return
    columns = (
        TextColumn("tournament {task.fields[id]}"),
        BarColumn(),
        TextColumn("{task.fields[counts]}"),
        TimeElapsedColumn(),
    )

    def counts(p: Any) -> str:
        named = (MatchStatus.DONE, MatchStatus.RUNNING, MatchStatus.FAILED, MatchStatus.QUEUED)
        return ", ".join(f"{p.counts[s]} {s}" for s in named)

    with Progress(*columns, console=stderr) as bar:
        shown = bar.add_task("", total=progress.total, id=tournament_id, counts=counts(progress))
        while True:
            ended = sum(progress.counts[s] for s in MatchStatus if s not in OPEN_MATCH)
            bar.update(shown, completed=ended, counts=counts(progress))
            if progress.finished or not follow:
                break
            time.sleep(1)
            progress = tournament_progress(pool, tournament_id)
    snapshot = latest_snapshot(pool, tournament_id)
    if progress.finished and snapshot is not None:
        title = f"leaderboard after {snapshot.match_count} matches ({progress.status})"
        Console().print(_leaderboard_table(snapshot.rows, title))


def cancel(tournament_id: Annotated[int, typer.Argument()]) -> None:
    """Stop scheduling a tournament's remaining matches (steps already running complete)."""
    from arena.store.tournaments import UnknownTournament, cancel_tournament

    with _pool(_settings()) as pool:
        try:
            count = cancel_tournament(pool, tournament_id)
        except UnknownTournament as exc:
            fail(BAD_INPUT, str(exc))
    print(f"tournament {tournament_id}: {count} unfinished match(es) cancelled")
