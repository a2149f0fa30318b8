"""Turn a directory of plain files into a git repository with a reproducible commit."""

from __future__ import annotations

import os
from pathlib import Path

import pygit2

from ci_runner import file_lock

_EPOCH = 1_700_000_000
_SIGNATURE = pygit2.Signature("Arena Demo", "demo@arena.invalid", _EPOCH, 0)


def _tree(repo: pygit2.Repository, directory: Path) -> pygit2.Oid:
    builder = repo.TreeBuilder()
    for entry in sorted(directory.iterdir(), key=lambda p: p.name):
        if entry.name in (".git", "__pycache__") or entry.name.endswith(".pyc"):
            continue
        if entry.is_symlink():
            blob = repo.create_blob(os.readlink(entry).encode())
            builder.insert(entry.name, blob, pygit2.enums.FileMode.LINK)
        elif entry.is_dir():
            builder.insert(entry.name, _tree(repo, entry), pygit2.enums.FileMode.TREE)
        else:
            blob = repo.create_blob(entry.read_bytes())
            executable = os.access(entry, os.X_OK)
            mode = (
                pygit2.enums.FileMode.BLOB_EXECUTABLE if executable else pygit2.enums.FileMode.BLOB
            )
            builder.insert(entry.name, blob, mode)
    return builder.write()


def commit_directory(source: Path, repo_path: Path, message: str = "Initial commit") -> str:
    """Commit `source` as the only commit of the bare repo at `repo_path`; same files, same SHA.

    Under a lock file beside the repo: every process of a deployment (the API, each worker)
    and a test beside them commit the same demo repos at start, and two creating one repo at
    once failed on git's own lock ("config.lock: File exists"), which ended a worker."""
    with file_lock(repo_path.with_name(f"{repo_path.name}.lock")):
        if repo_path.exists():
            repo = pygit2.Repository(str(repo_path))
        else:
            repo_path.parent.mkdir(parents=True, exist_ok=True)
            repo = pygit2.init_repository(str(repo_path), bare=True, initial_head="main")
        tree = _tree(repo, source)
        commit = repo.create_commit(None, _SIGNATURE, _SIGNATURE, message, tree, [])
        repo.references.create("refs/heads/main", commit, force=True)
        return str(commit)
