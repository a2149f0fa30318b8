"""Options shared by several commands."""

from pathlib import Path
from typing import Annotated

import typer

TasksOption = Annotated[str, typer.Option("--tasks", help="demo, imported, or a JSONL file")]
ModelsFileOption = Annotated[
    Path | None, typer.Option("--models-file", help="YAML or TOML file defining models")
]
