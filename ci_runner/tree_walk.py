"""Walking a workspace tree that a patch or a test patch made: no depth it can reach it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path


def walk(root: Path) -> Iterator[tuple[str, list[str], list[str]]]:
    """`os.walk(root)` top-down, as deep as the tree goes without recursing: a patch's tree
    1,000 folders deep must not end the runner in RecursionError (os.walk recurses before
    Python 3.12). Pruning `subdirs` in place prunes the walk, as with os.walk; links to
    folders are listed among `subdirs` and not followed; an unreadable folder is passed."""
    pending = [str(root)]
    while pending:
        top = pending.pop()
        try:
            with os.scandir(top) as listing:
                entries = list(listing)
        except OSError:
            continue
        subdirs: list[str] = []
        files: list[str] = []
        linked: set[str] = set()
        for entry in entries:
            try:
                is_dir = entry.is_dir()
                if is_dir and entry.is_symlink():
                    linked.add(entry.name)
            except OSError:
                is_dir = False
            (subdirs if is_dir else files).append(entry.name)
        yield top, subdirs, files
        pending.extend(os.path.join(top, d) for d in reversed(subdirs) if d not in linked)
