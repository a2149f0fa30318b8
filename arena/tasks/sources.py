"""Where tasks come from: the bundled demo corpus, the imported library, or a JSONL file."""

from __future__ import annotations

from pathlib import Path

from arena.tasks.demo import commit_demo_repos
from arena.tasks.importer import import_jsonl, write_jsonl
from arena.tasks.schema import Task, TaskError
from ci_runner import Workspaces


def library_path(cache_dir: Path) -> Path:
    return cache_dir / "tasks.jsonl"


def load_tasks(spec: str, cache_dir: Path, workspaces: Workspaces) -> list[Task]:
    """`demo`, `imported` (what `arena tasks import` stored) or the path of a JSONL file."""
    if spec == "demo":
        return commit_demo_repos(cache_dir)
    path = library_path(cache_dir) if spec == "imported" else Path(spec)
    if spec == "imported" and not path.exists():
        return []
    # the library was checked when it was imported; other files are checked now
    report = import_jsonl(path, None if spec == "imported" else workspaces)
    if report.errors:
        raise TaskError(f"{path}: " + "; ".join(str(e) for e in report.errors[:5]))
    return report.tasks


def update_library(cache_dir: Path, tasks: list[Task]) -> Path:
    """Merge `tasks` into the library by instance id; the other tasks stay as they are."""
    library = library_path(cache_dir)
    existing = import_jsonl(library, None).tasks if library.exists() else []
    merged = {t.instance_id: t for t in existing} | {t.instance_id: t for t in tasks}
    write_jsonl(library, merged.values())
    return library


def only(tasks: list[Task], instance_ids: list[str] | None) -> list[Task]:
    """The tasks named by `instance_ids` (all when None), each of which must exist."""
    if not instance_ids:
        return tasks
    return [find_task(i, tasks) for i in dict.fromkeys(instance_ids)]


def find_task(instance_id: str, tasks: list[Task]) -> Task:
    for task in tasks:
        if task.instance_id == instance_id:
            return task
    known = ", ".join(t.instance_id for t in tasks[:20])
    raise TaskError(f"no task {instance_id!r}; known: {known}")
