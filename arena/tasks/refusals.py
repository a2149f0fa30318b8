"""Refused import lines, kept: what a refusal records, read from the lines the importer refused,
merged by instance id, and the library's `import-refusals.jsonl` beside `tasks.jsonl`.

A refusal is keyed by its instance id; a line whose instance id cannot be read is keyed by its
file and line number. Merging an import's outcome into the kept refusals (`merge_refusals`):
a task that imports removes its refusal, a refused line replaces the refusal of the same key,
and the unkeyed refusals of a file imported again are dropped first (the new import reports
that file's lines afresh).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from arena.tasks.importer import LineError
from arena.tasks.json_records import JsonRecordError, load_json
from arena.tasks.record_files import read_records, write_records
from arena.tasks.schema import Language, language_of


class Refusal(BaseModel):
    """One import line that did not become a task, with the importer's reason for it."""

    model_config = ConfigDict(frozen=True)

    instance_id: str | None
    language: str | None  # as the line (or its file's name) gives it; None when it gives none
    repo: str | None
    source_file: str | None
    line: int
    field: str
    message: str
    reason: str  # LineError.reason: what the import report counts the line under

    @property
    def key(self) -> str:
        return self.instance_id or f"{self.source_file or '(upload)'}:{self.line}"

    @property
    def text(self) -> str:
        where = f"{self.source_file} line {self.line}" if self.source_file else f"line {self.line}"
        return f"{where}: {self.field}: {self.message}"


def _text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def refusals_from(
    lines: Sequence[str],
    errors: Iterable[LineError],
    source_file: str | None,
    language: Language | None = None,
) -> list[Refusal]:
    """A refusal per refused line (by its first error), with the instance id, language and repo
    read from the line itself when it is a JSON object that has them; `language` is the one the
    import filled lines without one with (from --language or the file name)."""
    first: dict[int, LineError] = {}
    for error in errors:
        first.setdefault(error.line, error)
    found = []
    for number, error in first.items():
        record: Any = None
        if 1 <= number <= len(lines):
            try:
                record = load_json(lines[number - 1])
            except JsonRecordError:
                record = None
        fields = record if isinstance(record, dict) else {}
        named = _text(fields.get("language"))
        chosen = language_of(named) if named else language
        found.append(
            Refusal(
                instance_id=_text(fields.get("instance_id")),
                language=chosen.value if chosen else named,
                repo=_text(fields.get("repo")),
                source_file=source_file,
                line=number,
                field=error.field,
                message=error.message,
                reason=error.reason,
            )
        )
    return found


def merge_refusals(
    kept: Iterable[Refusal],
    refused: Iterable[Refusal],
    imported_ids: Iterable[str],
    source_file: str | None,
) -> list[Refusal]:
    """Pure: the kept refusals after an import of `source_file` (see the module docstring)."""
    imported = set(imported_ids)
    merged = {
        r.key: r
        for r in kept
        if r.instance_id not in imported
        and not (r.instance_id is None and r.source_file == source_file)
    }
    for refusal in refused:
        if refusal.instance_id not in imported:
            merged[refusal.key] = refusal
    return sorted(merged.values(), key=lambda r: r.key)


def refusals_path(cache_dir: Path) -> Path:
    """Beside the library (`arena.tasks.sources.library_path`)."""
    return cache_dir / "import-refusals.jsonl"


def read_refusals(path: Path) -> list[Refusal]:
    return read_records(path, Refusal, "a refusal")


def write_refusals(path: Path, refusals: Iterable[Refusal]) -> None:
    write_records(path, refusals)


def keep_import_outcome(
    cache_dir: Path,
    refused: Iterable[Refusal],
    imported_ids: Iterable[str],
    source_file: str | None,
) -> Path:
    """Merges one import's outcome into the library's refusal file; returns its path."""
    path = refusals_path(cache_dir)
    write_refusals(path, merge_refusals(read_refusals(path), refused, imported_ids, source_file))
    return path
