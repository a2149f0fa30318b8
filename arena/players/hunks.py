"""Cutting unified diffs apart by file and hunk, and putting them back with right counts."""

from __future__ import annotations

import re
from dataclasses import dataclass

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$")


@dataclass(frozen=True)
class Hunk:
    old_start: int
    new_start: int
    tail: str
    lines: tuple[str, ...]  # each with its leading ' ', '+', '-' or '\\'

    def render(self) -> str:
        old = sum(1 for line in self.lines if line[:1] in (" ", "-"))
        new = sum(1 for line in self.lines if line[:1] in (" ", "+"))
        header = f"@@ -{self.old_start},{old} +{self.new_start},{new} @@{self.tail}\n"
        return header + "".join(line if line.endswith("\n") else line + "\n" for line in self.lines)


@dataclass(frozen=True)
class FilePatch:
    header: tuple[str, ...]
    hunks: tuple[Hunk, ...]

    def render(self) -> str:
        return "".join(self.header) + "".join(h.render() for h in self.hunks)


def split_diff(text: str) -> list[FilePatch]:
    files: list[FilePatch] = []
    header: list[str] = []
    hunks: list[Hunk] = []
    current: list[str] | None = None
    start = (0, 0, "")

    def close_hunk() -> None:
        nonlocal current
        if current is not None:
            hunks.append(Hunk(start[0], start[1], start[2], tuple(current)))
            current = None

    def close_file() -> None:
        nonlocal header, hunks
        close_hunk()
        if header or hunks:
            files.append(FilePatch(tuple(header), tuple(hunks)))
        header, hunks = [], []

    for line in text.splitlines(keepends=True):
        if line.startswith("diff --git ") or (line.startswith("--- ") and current is not None):
            close_file()
            header.append(line)
        elif match := _HUNK.match(line.rstrip("\n")):
            close_hunk()
            start = (int(match[1]), int(match[2]), match[3])
            current = []
        elif current is not None and line[:1] in (" ", "+", "-", "\\"):
            current.append(line)
        else:
            close_hunk()
            header.append(line)
    close_file()
    return files


def join_diff(files: list[FilePatch]) -> str:
    return "".join(f.render() for f in files if f.hunks)


def keep_first_hunks(text: str, keep: int) -> str:
    """The diff with only its first `keep` hunks (in file order); files left empty are dropped."""
    kept: list[FilePatch] = []
    left = keep
    for file in split_diff(text):
        hunks = file.hunks[: max(left, 0)]
        left -= len(hunks)
        kept.append(FilePatch(file.header, hunks))
    return join_diff(kept)


_TEST_START = re.compile(
    r"^(@|#\[|(async\s+)?def\s+test|func\s+Test|TEST\(|static\s+void\s+\w+\(|fn\s+\w+)"
)


def first_added_block(hunk: Hunk) -> Hunk:
    """The hunk with its added lines cut before the second test it defines.

    A test starts at a top-level line after a blank one: a decorator or attribute, a
    `def test...`, `func Test...`, `fn ...`, `TEST(...)`; imports and helpers are kept.
    """
    lines: list[str] = []
    tests_seen = 0
    cutting = False
    previous_blank = True
    for line in hunk.lines:
        if line.startswith("+"):
            body = line[1:].rstrip("\n")
            starts_test = previous_blank and bool(_TEST_START.match(body))
            previous_blank = not body.strip()
            if starts_test:
                tests_seen += 1
                cutting = tests_seen > 1
            if not cutting:
                lines.append(line)
            continue
        cutting = False  # context or removed lines end the added run
        previous_blank = not line[1:].strip()
        lines.append(line)
    while lines and lines[-1].startswith("+") and not lines[-1][1:].strip():
        lines.pop()  # no trailing blank lines left from the cut
    return Hunk(hunk.old_start, hunk.new_start, hunk.tail, tuple(lines))
