"""Options shared by several commands."""

from pathlib import Path
from typing import Annotated

import typer

TasksOption = Annotated[str, typer.Option("--tasks", help="demo, imported, or a JSONL file")]
OnlyOption = Annotated[
    list[str] | None,
    typer.Option("--only", help="only the task with this instance id (repeatable)"),
]
ModelsFileOption = Annotated[
    Path | None, typer.Option("--models-file", help="YAML or TOML file defining models")
]
