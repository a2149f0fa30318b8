"""Root of the `arena` command: wires the command groups together."""

import signal

import typer

from arena.cli import ci, demo, play, ratings, serve, service, tasks

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Arena: code LLMs compete on real GitHub issues.",
)
app.add_typer(ci.app, name="ci")
app.command("demo")(demo.demo)
app.add_typer(tasks.app, name="tasks")
app.command("play")(play.play)
app.command("tournament")(play.tournament)
app.command("ratings")(ratings.ratings)
app.add_typer(service.db, name="db")
for _name in ("worker", "submit", "status", "cancel"):
    app.command(_name)(getattr(service, _name))
app.command("serve")(serve.serve)


def _terminate(signum: int, _frame: object) -> None:
    """SIGTERM unwinds like Ctrl-C, so sandboxes and run directories are cleaned up."""
    raise SystemExit(128 + signum)


def main() -> None:
    signal.signal(signal.SIGTERM, _terminate)
    app()
