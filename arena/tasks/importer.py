"""JSONL import of tasks: every bad line is reported with its number and field; good ones import."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from arena.tasks.pipelines import with_pipeline
from arena.tasks.schema import Task, TaskError
from ci_runner.errors import WorkspaceError
from ci_runner.workspace import Workspaces


@dataclass(frozen=True)
class LineError:
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.field}: {self.message}"


@dataclass
class ImportReport:
    tasks: list[Task] = field(default_factory=list)
    errors: list[LineError] = field(default_factory=list)


def _validation_errors(line: int, exc: ValidationError) -> list[LineError]:
    return [
        LineError(line, ".".join(str(p) for p in err["loc"]) or "(record)", err["msg"])
        for err in exc.errors()
    ]


def import_lines(
    lines: Iterable[str],
    workspaces: Workspaces | None,
    on_line: Callable[[int], None] = lambda _: None,
) -> ImportReport:
    """Parse, validate and (with `workspaces`) check each task's repo, commit and pipeline."""
    report = ImportReport()
    seen: set[str] = set()
    for number, raw in enumerate(lines, start=1):
        on_line(number)
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            report.errors.append(LineError(number, "(line)", f"not JSON: {exc.msg}"))
            continue
        if not isinstance(record, dict):
            report.errors.append(LineError(number, "(line)", "not a JSON object"))
            continue
        try:
            task = Task.model_validate(record)
        except ValidationError as exc:
            report.errors.extend(_validation_errors(number, exc))
            continue
        if task.instance_id in seen:
            report.errors.append(
                LineError(number, "instance_id", f"{task.instance_id} appears twice")
            )
            continue
        if workspaces is not None:
            try:
                workspaces.mirror(task.repo, task.base_commit)
                task = with_pipeline(task, workspaces)
            except WorkspaceError as exc:
                where = "base_commit" if "is not in" in str(exc) else "repo"
                report.errors.append(LineError(number, where, str(exc)))
                continue
            except TaskError as exc:
                where, _, message = str(exc).partition(": ")
                report.errors.append(LineError(number, where, message))
                continue
        seen.add(task.instance_id)
        report.tasks.append(task)
    return report


def read_task_lines(path: Path) -> list[str]:
    try:
        return path.read_text().splitlines()
    except FileNotFoundError as exc:
        raise TaskError(f"task file {path} does not exist") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskError(f"cannot read {path}: {exc}") from exc


def import_jsonl(
    path: Path, workspaces: Workspaces | None, on_line: Callable[[int], None] = lambda _: None
) -> ImportReport:
    return import_lines(read_task_lines(path), workspaces, on_line)


def write_jsonl(path: Path, tasks: Iterable[Task]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(t.model_dump_json(by_alias=True, exclude_none=True) + "\n" for t in tasks)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(body)
    tmp.replace(path)
