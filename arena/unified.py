"""Unified diffs written from two texts of a file, as git writes them (new, deleted, renamed)."""

from __future__ import annotations

import difflib


def unified_diff(
    path: str, before: str | None, after: str | None, old_path: str | None = None
) -> str:
    """A git-style diff of one file from `before` (None: the file is new) to `after` (None:
    the file is deleted); `old_path` names the file before a rename. Empty when nothing
    changes."""
    source = old_path or path
    old = (before or "").splitlines(keepends=True)
    new = (after or "").splitlines(keepends=True)
    header = f"diff --git a/{source} b/{path}\n"
    if before is None:
        header += "new file mode 100644\n"
    elif after is None:
        header += "deleted file mode 100644\n"
    elif source != path:
        header += f"rename from {source}\nrename to {path}\n"
    body = [
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
        for line in difflib.unified_diff(
            old,
            new,
            fromfile="/dev/null" if before is None else f"a/{source}",
            tofile="/dev/null" if after is None else f"b/{path}",
            n=3,
        )
    ]
    if not body:
        return header if source != path and before is not None and after is not None else ""
    return header + "".join(body)
