"""Options shared by several commands."""

from enum import StrEnum
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


class Mode(StrEnum):
    ROUND_ROBIN = "round-robin"
    ADAPTIVE = "adaptive"


# a tournament's mode and its adaptive goal and budgets: `arena tournament` and `arena submit`
ModeOption = Annotated[
    Mode,
    typer.Option(
        "--mode",
        help="round-robin: every pair on every task; adaptive: the matches that most"
        " narrow neighbouring intervals, until the goal or a budget is reached",
    ),
]
TargetWidthOption = Annotated[
    float | None,
    typer.Option(
        "--target-width",
        min=1.0,
        help="adaptive: neighbours are done when their 95% intervals are apart or both"
        " at most this many points wide (default: apart only)",
    ),
]
MaxMatchesOption = Annotated[
    int | None, typer.Option("--max-matches", min=1, help="adaptive: match budget")
]
MaxModelMatchesOption = Annotated[
    int | None, typer.Option("--max-model-matches", min=1, help="adaptive: matches per model")
]
