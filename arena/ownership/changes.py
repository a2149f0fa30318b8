"""A test patch applied in memory to the base files: each file's two texts and changed lines.

Hunks are placed the way `patch` places them: at their stated line, else at the nearest
place their old lines match, else with up to two context lines dropped at either end (fuzz).
A hunk that matches nowhere is placed at its stated line, so the parsers still see a file.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass

from arena.hunks import FilePatch, Hunk, split_diff
from arena.languages.cases import ReadFile
from ci_runner import PatchError, normalize_diff

_MAX_FUZZ = 2


@dataclass(frozen=True)
class FileChange:
    """One file of a diff: texts before and after, and the line numbers the diff changes."""

    old_path: str | None  # None: the diff creates the file
    new_path: str | None  # None: the diff deletes the file
    old_text: str
    new_text: str
    removed: frozenset[int]  # 1-based lines of old_text the diff removes
    added: frozenset[int]  # 1-based lines of new_text the diff adds


def _header_path(line: str) -> str | None:
    path = line[4:].rstrip("\n").split("\t")[0].strip()
    return None if path == "/dev/null" else path


def file_paths(header: Sequence[str]) -> tuple[str | None, str | None]:
    """(old, new) path from `---`/`+++` (or `diff --git`) lines; `a/`, `b/` dropped in pairs."""
    old = new = None
    seen_old = seen_new = False
    for line in header:
        if line.startswith("--- ") and not seen_old:
            old, seen_old = _header_path(line), True
        elif line.startswith("+++ ") and not seen_new:
            new, seen_new = _header_path(line), True
    if not (seen_old or seen_new):
        for line in header:
            if line.startswith("diff --git a/") and " b/" in line:
                old_part, _, new_part = line[len("diff --git a/") :].rstrip("\n").partition(" b/")
                return old_part, new_part
        return None, None
    prefixed = (old is None or old.startswith("a/")) and (new is None or new.startswith("b/"))
    if prefixed:
        old = old[2:] if old is not None else None
        new = new[2:] if new is not None else None
    return old, new


def _same(a: str, b: str) -> bool:
    return a.rstrip("\r\n") == b.rstrip("\r\n")


def _matches_at(lines: Sequence[str], block: Sequence[str], at: int) -> bool:
    return at + len(block) <= len(lines) and all(
        _same(lines[at + i], b) for i, b in enumerate(block)
    )


def _locate(lines: Sequence[str], block: Sequence[str], stated: int, floor: int) -> int | None:
    """Where `block` occurs, nearest to `stated` and not before `floor`."""
    if not block:
        return max(floor, min(stated, len(lines)))
    for distance in range(len(lines) + 1):
        for at in (stated - distance, stated + distance):
            if floor <= at and _matches_at(lines, block, at):
                return at
        if stated - distance < floor and stated + distance > len(lines):
            break
    return None


def _trimmed(body: tuple[str, ...], lead: int, trail: int) -> tuple[str, ...] | None:
    """The hunk body without `lead`/`trail` context lines, if those are context lines."""
    end = len(body) - trail
    if end <= lead or any(not line.startswith(" ") for line in body[:lead] + body[end:]):
        return None
    return body[lead:end]


def _place(lines: Sequence[str], hunk: Hunk, floor: int) -> tuple[int, tuple[str, ...]]:
    """Where the hunk applies and the body that applies there."""
    body = tuple(line for line in hunk.lines if not line.startswith("\\"))
    stated = (
        max(hunk.old_start - 1, 0) if any(line[:1] in " -" for line in body) else hunk.old_start
    )
    for fuzz in range(_MAX_FUZZ + 1):
        for lead, trail in ((fuzz, 0), (0, fuzz), (fuzz, fuzz)):
            trimmed = _trimmed(body, lead, trail)
            if trimmed is None:
                continue
            old = [line[1:] for line in trimmed if line[:1] in (" ", "-")]
            at = _locate(lines, old, stated + lead, floor)
            if at is not None:
                return at, trimmed
    return max(floor, min(stated, len(lines))), body


def apply_file(old_text: str, hunks: Sequence[Hunk]) -> tuple[str, frozenset[int], frozenset[int]]:
    """The new text, the old lines removed and the new lines added."""
    lines = old_text.splitlines(keepends=True)
    out: list[str] = []
    removed: set[int] = set()
    added: set[int] = set()
    position = 0
    for hunk in hunks:
        at, body = _place(lines, hunk, position)
        out.extend(lines[position:at])
        cursor = at
        for line in body:
            kind, content = line[:1], line[1:]
            if kind == "+":
                out.append(content if content.endswith("\n") else content + "\n")
                added.add(len(out))
            elif cursor < len(lines):
                if kind == "-":
                    removed.add(cursor + 1)
                else:
                    out.append(lines[cursor])
                cursor += 1
        position = max(position, cursor)
    out.extend(lines[position:])
    return "".join(out), frozenset(removed), frozenset(added)


def _change(patch: FilePatch, read_base: ReadFile) -> FileChange | None:
    old_path, new_path = file_paths(patch.header)
    if old_path is None and new_path is None:
        return None
    old_text = (read_base(old_path) or "") if old_path is not None else ""
    new_text, removed, added = apply_file(old_text, patch.hunks)
    if new_path is None:
        new_text, added = "", frozenset()
    return FileChange(old_path, new_path, old_text, new_text, removed, added)


def file_changes(diff_text: str, read_base: ReadFile) -> list[FileChange]:
    """Every file the diff changes, applied to its text at the base commit. The diff is first
    normalized as the runner normalizes it (plain diffs, blank context lines, quoted paths)."""
    with suppress(PatchError):  # refused by the runner too: read as it is
        diff_text = normalize_diff(diff_text).text
    changes = (_change(patch, read_base) for patch in split_diff(diff_text))
    return [change for change in changes if change is not None]
