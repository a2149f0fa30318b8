"""JSONL import of tasks: every bad line is reported with its number, field and reason; good
lines import. SwingArena's published files import unmodified."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from arena.tasks.consistency import (
    line_problem,
    no_code_problem,
    touches_no_source,
    with_language,
)
from arena.tasks.json_records import MAX_DEPTH, JsonRecordError, depth_exceeds, load_json
from arena.tasks.pipelines import with_pipeline
from arena.tasks.schema import Language, Task, TaskError, TaskKind, UnsupportedTask, language_of
from ci_runner import (
    ANY_JOB,
    CISettings,
    CommitMissing,
    Refusal,
    WorkflowError,
    WorkspaceError,
    Workspaces,
    channel_unreachable,
)

_FILE_LANGUAGE = re.compile(r"^(?P<language>[A-Za-z+]+)[_.-]")
# stands for an array's record that nests too deep (re-encoding it could recurse as deep):
# a line the import refuses for the same reason, under the record's number
_TOO_DEEP_LINE = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)


@dataclass(frozen=True)
class LineError:
    line: int
    field: str
    message: str
    reason: str = "invalid"  # what the import report counts skipped lines by

    def __str__(self) -> str:
        return f"line {self.line}: {self.field}: {self.message}"


@dataclass
class ImportReport:
    tasks: list[Task] = field(default_factory=list)
    errors: list[LineError] = field(default_factory=list)

    def skipped(self) -> dict[str, int]:
        """Skipped lines per reason (a line with several errors counts once, by its first)."""
        first: dict[int, str] = {}
        for error in self.errors:
            first.setdefault(error.line, error.reason)
        return dict(Counter(first.values()).most_common())

    def kinds(self) -> dict[TaskKind, int]:
        return dict(Counter(t.kind for t in self.tasks))


def language_from_file_name(path: Path) -> Language | None:
    """SwingArena names its files `{language}_filtered_instance_list.jsonl`."""
    match = _FILE_LANGUAGE.match(path.name)
    return language_of(match["language"]) if match else None


def _validation_errors(line: int, exc: ValidationError) -> list[LineError]:
    errors = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(record)"
        reason = f"missing {where}" if err["type"] == "missing" else f"bad {where}"
        errors.append(LineError(line, where, err["msg"], reason))
    return errors


def _fill_defaults(record: dict[str, Any], language: Language | None, any_job: bool) -> None:
    if language is not None and not record.get("language"):
        record["language"] = language.value
    if any_job and not record.get("pipeline") and not record.get("ci_name_list"):
        record["ci_name_list"] = [ANY_JOB]


def import_checked(lines: Iterable[str], settings: CISettings | None) -> ImportReport:
    """`import_lines`, checking each repo, commit and pipeline in workspaces built from
    `settings` (None: no check): a driver hands settings, never workspaces of its own."""
    return import_lines(lines, None if settings is None else Workspaces.from_settings(settings))


def import_lines(
    lines: Iterable[str],
    workspaces: Workspaces | None,
    on_line: Callable[[int], None] = lambda _: None,
    *,
    language: Language | None = None,
    any_job: bool = False,
) -> ImportReport:
    """Parse, validate and (with `workspaces`) check each task's repo, commit and pipeline.

    `language` fills lines that have none; `any_job` lets a line without a pipeline or a
    job list (SWE-bench's) take the first Linux job of its repo that runs tests.
    """
    report = ImportReport()
    seen: set[str] = set()
    for number, raw in enumerate(lines, start=1):
        on_line(number)
        if not raw.strip():
            continue
        try:
            outcome = _read_line(number, raw, workspaces, language, any_job, seen)
        except Exception as exc:  # one line never sinks the file: it is refused
            outcome = [_unexpected(number, exc)]
        if isinstance(outcome, Task):
            seen.add(outcome.instance_id)
            report.tasks.append(outcome)
        else:
            report.errors.extend(outcome)
    return report


# a line Arena's own code failed on: kept as that line's refusal, counted as Arena's fault
ARENA_FAULT = "Arena could not read the line (Arena's fault)"


def _unexpected(number: int, exc: Exception) -> LineError:
    where = getattr(exc, "__traceback__", None)
    frame = ""
    while where is not None:
        frame = f" (at {where.tb_frame.f_code.co_filename.rsplit('/', 1)[-1]}:{where.tb_lineno})"
        where = where.tb_next
    return LineError(number, "(line)", f"{type(exc).__name__}: {exc}{frame}", ARENA_FAULT)


def _read_line(
    number: int,
    raw: str,
    workspaces: Workspaces | None,
    language: Language | None,
    any_job: bool,
    seen: set[str],
) -> Task | list[LineError]:
    """One line as a task, or why it is none."""
    try:
        record = load_json(raw)
    except JsonRecordError as exc:
        return [LineError(number, "(line)", str(exc), exc.reason)]
    if not isinstance(record, dict):
        return [LineError(number, "(line)", "not a JSON object", "not JSON")]
    _fill_defaults(record, language, any_job)
    if not record.get("language"):
        return [
            LineError(
                number,
                "language",
                "the line has none and neither --language nor the file name gives one",
                "missing language",
            )
        ]
    try:
        task = Task.model_validate(record)
    except ValidationError as exc:
        return _validation_errors(number, exc)
    try:
        task = with_language(task)
    except UnsupportedTask as exc:
        where, _, message = str(exc).partition(": ")
        return [LineError(number, where, message, exc.reason)]
    if (problem := line_problem(task)) is not None:
        where, _, message = str(problem).partition(": ")
        return [LineError(number, where, message, problem.reason)]
    if task.instance_id in seen:
        return [LineError(number, "instance_id", f"{task.instance_id} appears twice", "duplicate")]
    try:
        if workspaces is not None:
            workspaces.mirror(task.repo, task.base_commit)
        if touches_no_source(task):  # only then do the repo's own files matter: list them
            files = workspaces.list_files(task.repo, task.base_commit) if workspaces else None
            if (problem := no_code_problem(task, files)) is not None:
                where, _, message = str(problem).partition(": ")
                return [LineError(number, where, message, problem.reason)]
        return with_pipeline(task, workspaces) if workspaces else task
    except WorkspaceError as exc:
        where = "base_commit" if isinstance(exc, CommitMissing) else "repo"
        return [LineError(number, where, str(exc), exc.reason)]
    except TaskError as exc:
        where, _, message = str(exc).partition(": ")
        reason = "no usable CI job" if where == "ci_name_list" else f"bad {where}"
        if isinstance(exc, UnsupportedTask):
            reason = exc.reason
        if reason == Refusal.CONDA and (why := _conda_unreachable()):
            reason, message = (
                Refusal.CONDA_UNREACHABLE,
                f"{message}; no conda channel answers: {why}",
            )
        return [LineError(number, where, message, reason)]
    except WorkflowError as exc:
        return [LineError(number, "ci_name_list", str(exc), exc.reason)]


def _conda_unreachable() -> str | None:
    """Why this machine reaches no conda channel (the settings' channel), or None."""
    settings = CISettings()
    return channel_unreachable(settings.conda_channel, settings.build_ca_bundle)


def read_task_lines(path: Path) -> list[str]:
    try:
        return path.read_text().splitlines()
    except FileNotFoundError as exc:
        raise TaskError(f"task file {path} does not exist") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskError(f"cannot read {path}: {exc}") from exc


def task_lines(text: str) -> list[str]:
    """The records of a task file as lines: JSON lines, or a JSON array (SwingArena's, a
    dataset's export) with one line per record. Text that starts like an array but does not
    read as one (a JSON lines file whose first line is bad) is read as JSON lines, so each of
    its lines is judged, and refused, on its own."""
    if text.lstrip().startswith("["):
        try:
            records = json.loads(text)
        except (ValueError, RecursionError):
            records = None
        if isinstance(records, list):
            return [
                _TOO_DEEP_LINE if depth_exceeds(r, MAX_DEPTH) else json.dumps(r) for r in records
            ]
    return text.splitlines()


def read_hf_export(path: Path) -> list[str]:
    """The records of a Hugging Face dataset exported to a local file, as JSON lines (offline).

    JSON lines (`Dataset.to_json`) and a JSON array are read; parquet would need pyarrow,
    which Arena does not depend on.
    """
    if path.suffix == ".parquet":
        raise TaskError(
            f"{path}: parquet needs pyarrow, which Arena does not install; export the dataset "
            "as JSON lines instead (datasets: `load_dataset(...)[split].to_json('x.jsonl')`)"
        )
    if not path.exists():
        raise TaskError(f"--hf {path}: no such local file (imports work offline from a file)")
    return task_lines("\n".join(read_task_lines(path)))


def import_jsonl(
    path: Path, workspaces: Workspaces | None, on_line: Callable[[int], None] = lambda _: None
) -> ImportReport:
    return import_lines(
        read_task_lines(path), workspaces, on_line, language=language_from_file_name(path)
    )


def write_jsonl(path: Path, tasks: Iterable[Task]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(t.model_dump_json(by_alias=True, exclude_none=True) + "\n" for t in tasks)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(body)
    tmp.replace(path)
