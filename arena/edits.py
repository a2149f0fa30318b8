"""Model answers into diffs: a unified diff, or SEARCH/REPLACE blocks applied to the base."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass

from ci_runner.errors import PatchError
from ci_runner.patches import parse_diff

ReadFile = Callable[[str], "str | None"]

_FENCE = re.compile(r"```[ \t]*(?:diff|patch|udiff)?[ \t]*\n(.*?)```", re.DOTALL)
_BLOCK = re.compile(
    r"(?P<path>[^\n]*)\n(?:```[^\n]*\n)?<<<<<<< SEARCH\n(?P<search>.*?)"
    r"^=======\n(?P<replace>.*?)^>>>>>>> REPLACE",
    re.DOTALL | re.MULTILINE,
)


class EditError(ValueError):
    """An answer that cannot be turned into a diff; the message says why."""


@dataclass(frozen=True)
class Edit:
    path: str
    search: str
    replace: str


def _diff_candidates(text: str) -> list[str]:
    fenced = [m.group(1) for m in _FENCE.finditer(text)]
    candidates = [c for c in fenced if re.search(r"^(diff --git |--- )", c, re.MULTILINE)]
    if not candidates:
        start = re.search(r"^(diff --git |--- (a/|/dev/null))", text, re.MULTILINE)
        if start:
            candidates = [text[start.start() :]]
    return candidates


def _clean_path(line: str) -> str:
    path = line.strip().strip("`*").strip()
    path = re.sub(r"^(?:file(?:name)?|path)\s*:\s*", "", path, flags=re.IGNORECASE)
    return path.removeprefix("./").removeprefix("a/").removeprefix("b/")


def parse_search_replace(text: str) -> list[Edit]:
    edits = []
    for match in _BLOCK.finditer(text):
        path = _clean_path(match["path"])
        if not path or path.startswith("```"):
            raise EditError("a SEARCH/REPLACE block is not preceded by the file path")
        edits.append(Edit(path=path, search=match["search"], replace=match["replace"]))
    return edits


def _unified(path: str, before: str | None, after: str) -> str:
    old = (before or "").splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    header = f"diff --git a/{path} b/{path}\n"
    if before is None:
        header += "new file mode 100644\n"
    body = []
    for line in difflib.unified_diff(
        old, new, fromfile="/dev/null" if before is None else f"a/{path}", tofile=f"b/{path}", n=3
    ):
        body.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return header + "".join(body) if body else ""


def edits_to_diff(edits: list[Edit], read_file: ReadFile) -> str:
    """Apply the edits in order to the base files and diff the result against the base."""
    originals: dict[str, str | None] = {}
    current: dict[str, str] = {}
    for edit in edits:
        if edit.path not in current:
            originals[edit.path] = read_file(edit.path)
            current[edit.path] = originals[edit.path] or ""
        text = current[edit.path]
        if not edit.search.strip():
            current[edit.path] = (
                text + ("" if not text or text.endswith("\n") else "\n") + edit.replace
            )
        elif edit.search in text:
            current[edit.path] = text.replace(edit.search, edit.replace, 1)
        else:
            where = (
                "the file does not exist"
                if originals[edit.path] is None
                else "not found in the file"
            )
            raise EditError(f"{edit.path}: SEARCH text {where}: {edit.search.strip()[:80]!r}")
    diff = "".join(_unified(p, originals[p], current[p]) for p in current)
    if not diff:
        raise EditError("the SEARCH/REPLACE blocks change nothing")
    return diff


def answer_to_diff(text: str, read_file: ReadFile) -> str:
    """The diff an answer stands for; EditError if it holds neither form, or a broken one."""
    if not text.strip():
        raise EditError("the answer is empty")
    edits = parse_search_replace(text)
    if edits:
        return edits_to_diff(edits, read_file)
    candidates = _diff_candidates(text)
    if not candidates:
        raise EditError("the answer holds neither a unified diff nor SEARCH/REPLACE blocks")
    diff = "".join(c if c.endswith("\n") else c + "\n" for c in candidates)
    try:
        parse_diff(diff)
    except PatchError as exc:
        raise EditError(f"the diff in the answer is malformed: {exc.reason}") from exc
    return diff
