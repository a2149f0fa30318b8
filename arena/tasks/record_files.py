"""Files of records beside the library (refused import lines, trials): one JSON object per
line, each read as its model, written whole and replaced at once so a reader never sees half
a file."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from arena.tasks.schema import TaskError

M = TypeVar("M", bound=BaseModel)


def read_records(path: Path, model: type[M], what: str) -> list[M]:
    """Every record of `path` (none when it does not exist); a line that is not `what` is a
    TaskError naming the file and the line."""
    if not path.exists():
        return []
    found = []
    try:
        for number, raw in enumerate(path.read_text().splitlines(), start=1):
            if raw.strip():
                try:
                    found.append(model.model_validate_json(raw))
                except ValidationError as exc:
                    raise TaskError(f"{path} line {number} is not {what}: {exc}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskError(f"cannot read {path}: {exc}") from exc
    return found


def write_records(path: Path, records: Iterable[BaseModel]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(r.model_dump_json() + "\n" for r in records))
    tmp.replace(path)
