"""Root of the `arena` command: wires the command groups together.

Each command's module is imported only when that command runs (or when help lists them all):
the modules bring the Docker client, git bindings, numpy and scipy, the store and the service,
and a command that needs one of them should not wait ~0.5 s for all the others.
"""

import importlib
import signal
from dataclasses import dataclass

import typer
from typer.core import TyperGroup


@dataclass(frozen=True)
class _Entry:
    module: str
    attribute: str  # a typer.Typer (a group of commands) or a function (one command)


_COMMANDS = {
    "ci": _Entry("cli.ci", "app"),
    "demo": _Entry("cli.demo", "demo"),
    "tasks": _Entry("cli.tasks", "app"),
    "play": _Entry("cli.play", "play"),
    "tournament": _Entry("cli.play", "tournament"),
    "ratings": _Entry("cli.ratings", "ratings"),
    "db": _Entry("cli.service", "db"),
    "worker": _Entry("cli.service", "worker"),
    "submit": _Entry("cli.service", "submit"),
    "status": _Entry("cli.service", "status"),
    "cancel": _Entry("cli.service", "cancel"),
    "serve": _Entry("cli.serve", "serve"),
}


def command(name: str) -> typer.core.TyperCommand | TyperGroup:
    """The click command `arena <name>` runs, its module imported now."""
    entry = _COMMANDS[name]
    target = getattr(importlib.import_module(entry.module), entry.attribute)
    if isinstance(target, typer.Typer):  # a group, even of one command (`arena db migrate`)
        group = typer.main.get_group(target)
        group.name = name
        return group
    single = typer.Typer(add_completion=False)  # one function: a one-command app is that command
    single.command(name)(target)
    return typer.main.get_command(single)  # type: ignore[return-value]


class _Commands(TyperGroup):
    def list_commands(self, ctx: typer.Context) -> list[str]:  # type: ignore[override]
        return list(_COMMANDS)

    def get_command(self, ctx: typer.Context, cmd_name: str) -> typer.core.TyperCommand | None:  # type: ignore[override]
        return command(cmd_name) if cmd_name in _COMMANDS else None  # type: ignore[return-value]


app = typer.Typer(
    cls=_Commands,
    no_args_is_help=True,
    add_completion=False,
    help="Arena: code LLMs compete on real GitHub issues.",
)


@app.callback()
def _root() -> None:
    """Arena: code LLMs compete on real GitHub issues."""


def _terminate(signum: int, _frame: object) -> None:
    """SIGTERM unwinds like Ctrl-C, so sandboxes and run directories are cleaned up."""
    raise SystemExit(128 + signum)


def main() -> None:
    signal.signal(signal.SIGTERM, _terminate)
    app()
