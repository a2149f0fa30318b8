"""Model answers into diffs: a unified diff, SEARCH/REPLACE blocks applied to the base, or both.

Answers are read the way models write them: prose around fenced blocks, plain `--- a/x`
diffs with miscounted hunks, and SEARCH/REPLACE blocks whose path is written in any of the
usual ways. The diff is found by its own structure (`ci_runner.diff_text`, the one place
diffs are read and repaired), so a fence marker inside a hunk is content, not the fence's
end. An answer is used whole or refused with the reason, never applied in part: a diff cut
short, or a file edited both by a diff and by SEARCH/REPLACE blocks, is refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from arena.unified import unified_diff
from ci_runner import FileDiff, PatchError, check_text, normalize_diff, parse_diff, read_diff

ReadFile = Callable[[str], "str | None"]

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*(.*?)\s*$")
_SEARCH = re.compile(r"^\s*<{5,9} ?SEARCH\s*$")
_DIVIDER = re.compile(r"^\s*={5,9}\s*$")
_REPLACE = re.compile(r"^\s*>{5,9} ?REPLACE\s*$")
_LABEL = re.compile(r"^(?:#{1,6}\s*|(?:\d+\.|[-*])\s+)")
_FILE_WORD = re.compile(r"^(?:file(?:name)?|path)\s*:\s*", re.IGNORECASE)
_BACKTICKED = re.compile(r"`([^`\s]+)`")
_BARE_NAMES = re.compile(r"^(?:[A-Z][A-Za-z]*file|LICENSE|README|CODEOWNERS)$")
_MAX_SNIPPET = 80


class EditError(ValueError):
    """An answer that cannot be turned into a diff; the message says why."""


@dataclass(frozen=True)
class Edit:
    path: str
    search: str
    replace: str


def _looks_like_path(text: str) -> bool:
    return (
        bool(text)
        and not any(c.isspace() for c in text)
        and not text.startswith(("`", "<", "=", ">", "~"))
        and ("/" in text or "." in text.strip(".") or bool(_BARE_NAMES.match(text)))
    )


def _path_in_line(line: str) -> str | None:
    """The path a line names: `path`, `` `path`: ``, `File: path`, `### path`, `**path**`."""
    cleaned = _LABEL.sub("", line.strip()).strip("*_ ")
    cleaned = _FILE_WORD.sub("", cleaned).strip("*_ ").rstrip(":").strip("*_` ").rstrip(":")
    cleaned = cleaned.removeprefix("./")
    if _looks_like_path(cleaned):
        return cleaned
    named = [p.rstrip(":") for p in _BACKTICKED.findall(line) if _looks_like_path(p.rstrip(":"))]
    return named[-1].removeprefix("./") if named else None


def _path_before(lines: list[str]) -> str | None:
    """The path written above a SEARCH marker: on a fence info line or the line above it."""
    above = [line.strip() for line in lines]
    while above and not above[-1]:
        above.pop()
    if above and _FENCE.match(above[-1]):
        info = _FENCE.match(above[-1])
        assert info is not None
        for token in reversed(info.group(2).split()):
            if _looks_like_path(token.strip("`")):
                return token.strip("`").removeprefix("./")
        above.pop()
        while above and not above[-1]:
            above.pop()
    if not above or _FENCE.match(above[-1]) or _REPLACE.match(above[-1]):
        return None
    return _path_in_line(above[-1])


def parse_search_replace(text: str) -> list[Edit]:
    """The blocks in order; a block with no path of its own edits the previous block's file."""
    lines = text.splitlines(keepends=True)
    edits: list[Edit] = []
    previous_end = 0
    path: str | None = None
    i = 0
    while i < len(lines):
        if not _SEARCH.match(lines[i]):
            i += 1
            continue
        divider = next((j for j in range(i + 1, len(lines)) if _DIVIDER.match(lines[j])), None)
        end = (
            next((k for k in range(divider + 1, len(lines)) if _REPLACE.match(lines[k])), None)
            if divider is not None
            else None
        )
        if divider is None or end is None:
            raise EditError("a SEARCH/REPLACE block is not closed by ======= and >>>>>>> REPLACE")
        path = _path_before(lines[previous_end:i]) or path
        if path is None:
            raise EditError("a SEARCH/REPLACE block is not preceded by the file path")
        search = "".join(lines[i + 1 : divider])
        replace = "".join(lines[divider + 1 : end])
        edits.append(Edit(path=path, search=search, replace=replace))
        previous_end = i = end + 1
    return edits


def _resolve(path: str, read_file: ReadFile) -> str:
    """Drop a diff-style `a/` or `b/` only when the path exists without it and not with it."""
    if (
        path.startswith(("a/", "b/"))
        and read_file(path) is None
        and read_file(path[2:]) is not None
    ):
        return path[2:]
    return path


def _snippet(search: str) -> str:
    return repr(search.strip()[:_MAX_SNIPPET])


def _with_endings(text: str, newline: str) -> str:
    return "".join(line.rstrip("\r\n") + newline for line in text.splitlines())


def _replace_once(path: str, text: str, edit: Edit, exists: bool) -> str:
    """`text` with the one place matching edit.search replaced; EditError if not exactly one."""
    newline = "\r\n" if "\r\n" in text else "\n"
    if not edit.search.strip():
        return (
            text
            + ("" if not text or text.endswith("\n") else newline)
            + (_with_endings(edit.replace, newline) if newline == "\r\n" else edit.replace)
        )
    count = text.count(edit.search)
    if count == 1:
        return text.replace(edit.search, edit.replace, 1)
    if count == 0:  # line by line, ignoring trailing whitespace and CR
        lines = text.splitlines(keepends=True)
        wanted = [line.rstrip() for line in edit.search.splitlines()]
        while wanted and not wanted[-1]:
            wanted.pop()
        starts = [
            i
            for i in range(len(lines) - len(wanted) + 1)
            if all(lines[i + k].rstrip() == wanted[k] for k in range(len(wanted)))
        ]
        count = len(starts)
        if count == 1:
            start, stop = starts[0], starts[0] + len(wanted)
            replacement = _with_endings(edit.replace, newline)
            if not lines[stop - 1].endswith("\n"):
                replacement = replacement.removesuffix(newline)
            return "".join([*lines[:start], replacement, *lines[stop:]])
    if count > 1:
        raise EditError(
            f"{path}: SEARCH text matches {count} places, so the edit is ambiguous: "
            f"{_snippet(edit.search)}"
        )
    where = "not found in the file" if exists else "the file does not exist"
    raise EditError(f"{path}: SEARCH text {where}: {_snippet(edit.search)}")


def edits_to_diff(edits: list[Edit], read_file: ReadFile) -> str:
    """Apply the edits in order to the base files and diff the result against the base."""
    originals: dict[str, str | None] = {}
    current: dict[str, str] = {}
    for edit in edits:
        path = _resolve(edit.path, read_file)
        if path not in current:
            originals[path] = read_file(path)
            current[path] = originals[path] or ""
        current[path] = _replace_once(path, current[path], edit, originals[path] is not None)
    diff = "".join(unified_diff(p, originals[p], current[p]) for p in current)
    if not diff:
        raise EditError("the SEARCH/REPLACE blocks change nothing")
    return diff


def _outside(text: str, files: tuple[FileDiff, ...]) -> str:
    """`text` with the lines the diff was read from left blank: nothing in a hunk is a marker."""
    lines = text.splitlines(keepends=True)
    for file in files:
        lines[file.first_line : file.end_line] = ["\n"] * (file.end_line - file.first_line)
    return "".join(lines)


def _unified_part(text: str) -> str:
    """The unified diff written in the answer, whole; EditError if it is cut short or broken."""
    try:
        normalized = normalize_diff(text)
        if normalized.cut_short:
            raise EditError(
                "the diff in the answer is cut short, so none of it is used: "
                f"{normalized.cut_short}"
            )
        parse_diff(normalized.text)
    except PatchError as exc:
        raise EditError(f"the diff in the answer is malformed: {exc.reason}") from exc
    return normalized.text


def _touched(diff: str) -> set[str]:
    return {
        path
        for patch in parse_diff(diff)
        if patch is not None
        for path in (patch.delta.old_file.path, patch.delta.new_file.path)
    }


def answer_to_diff(text: str, read_file: ReadFile) -> str:
    """The diff an answer stands for: its unified diff, its SEARCH/REPLACE blocks, or both in
    the answer's order when they change different files. EditError saying why when it holds
    neither, a broken or cut-short diff, or a file edited in both forms."""
    if not text or text.isspace():
        raise EditError("the answer is empty")
    try:
        check_text(text)
    except PatchError as exc:
        raise EditError(f"the answer cannot be used: {exc.reason}") from exc
    files = read_diff(text)
    outside = _outside(text, files)
    edits = parse_search_replace(outside)
    diff = _unified_part(text) if files else None
    if not edits:
        if diff is None:
            raise EditError("the answer holds neither a unified diff nor SEARCH/REPLACE blocks")
        return diff
    blocks = edits_to_diff(edits, read_file)
    if diff is None:
        return blocks
    both = sorted(_touched(diff) & _touched(blocks))
    if both:
        raise EditError(
            f"the answer edits {', '.join(both)} both in a unified diff and in SEARCH/REPLACE "
            "blocks, so it is unclear which is meant"
        )
    first_block = next(i for i, line in enumerate(outside.splitlines()) if _SEARCH.match(line))
    return diff + blocks if files[0].first_line < first_block else blocks + diff
