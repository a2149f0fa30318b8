"""The task schema, and loading one task from a JSON file with errors that name the field."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ci_runner import Pipeline


class Language(StrEnum):
    PYTHON = "python"
    GO = "go"
    RUST = "rust"
    CPP = "cpp"


class TaskError(ValueError):
    """A task file or record is malformed; the message names the field at fault."""


class Task(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    instance_id: str = Field(min_length=1)
    repo: str = Field(min_length=1, description="git URL or local path")
    base_commit: str = Field(min_length=4)
    language: Language
    pipeline: Pipeline
    image: str | None = None
    problem_statement: str = ""
    hints_text: str = ""
    patch: str = ""
    test_patch: str = ""
    created_at: str | None = None


def describe_validation_error(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(record)"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def load_task_file(path: Path) -> Task:
    try:
        raw = json.loads(path.read_text())
    except FileNotFoundError as exc:
        raise TaskError(f"task file {path} does not exist") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskError(f"cannot read task file {path}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise TaskError(f"task file {path} is not JSON: {exc}") from exc
    if not isinstance(raw, dict):
        raise TaskError(f"task file {path} must hold a JSON object")
    try:
        return Task.model_validate(raw)
    except ValidationError as exc:
        raise TaskError(f"task file {path}: {describe_validation_error(exc)}") from exc
