"""The bundled demo corpus: plain files in the package, turned into git repos on use."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from arena.tasks.gitrepo import commit_directory
from arena.tasks.schema import Task, TaskError

DEMO_DIR = Path(__file__).parent / "demo"


@dataclass(frozen=True)
class DemoSource:
    name: str
    directory: Path


def demo_sources() -> list[DemoSource]:
    return [
        DemoSource(name=d.name, directory=d)
        for d in sorted(DEMO_DIR.iterdir())
        if (d / "task.toml").is_file()
    ]


def materialize(source: DemoSource, repos_dir: Path) -> Task:
    """Commit the demo's files into a repo under `repos_dir` and return its task."""
    try:
        meta = tomllib.loads((source.directory / "task.toml").read_text())
    except tomllib.TOMLDecodeError as exc:
        raise TaskError(f"demo task {source.name}: task.toml: {exc}") from exc
    commit = commit_directory(source.directory / "repo", repos_dir / f"{source.name}.git")
    fields = {
        **meta,
        "repo": str(repos_dir / f"{source.name}.git"),
        "base_commit": commit,
        "patch": (source.directory / "gold.patch").read_text(),
        "test_patch": (source.directory / "test.patch").read_text(),
    }
    try:
        return Task.model_validate(fields)
    except ValueError as exc:
        raise TaskError(f"demo task {source.name}: {exc}") from exc


def demo_tasks(repos_dir: Path) -> list[Task]:
    return [materialize(source, repos_dir) for source in demo_sources()]


def commit_demo_repos(cache_dir: Path) -> list[Task]:
    """The demo corpus with its repos committed under this host's cache.

    Tasks of the corpus name repos by path, and a deployment's processes (API, each worker) share
    no files: each commits its own copy at start, with the same SHAs (same files, same commit).
    """
    return demo_tasks(cache_dir / "demo-repos")
