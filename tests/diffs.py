"""Diffs the tests write by hand, in the shape `git diff` gives them."""

from __future__ import annotations


def new_file(path: str, text: str) -> str:
    """A diff creating `path` with `text` (each of its lines an added line)."""
    lines = text.splitlines(keepends=True)
    body = "".join(f"+{line}" for line in lines)
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        f"@@ -0,0 +1,{len(lines)} @@\n{body}"
    )
