"""Exit codes shared by every command, and the one place that maps errors to them."""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from ci_runner.errors import (
    EnvironmentBuildError,
    PatchError,
    ReportError,
    SandboxError,
    WorkspaceError,
)

OK = 0
BAD_INPUT = 2
INFRASTRUCTURE = 3

stderr = Console(stderr=True, soft_wrap=True)  # messages stay whole lines, for grep


def fail(code: int, message: str) -> NoReturn:
    """Print `message` as it is (it often quotes a task, a diff or a model: never markup)."""
    stderr.print(f"[bold red]error:[/] {escape(message)}", highlight=False, markup=True)
    raise typer.Exit(code)


@contextmanager
def exit_on_errors() -> Iterator[None]:
    """Bad input exits 2, a Docker or engine fault exits 3, each with its message."""
    try:
        yield
    except SandboxError as exc:
        fail(INFRASTRUCTURE, f"infrastructure: {exc}")
    except (PatchError, ReportError, WorkspaceError, EnvironmentBuildError, ValueError) as exc:
        fail(BAD_INPUT, str(exc))
