"""Cutting unified diffs apart by file and hunk, and putting them back with right counts."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ci_runner import read_diff


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


def _start(line: int | None) -> int:
    return 1 if line is None else line  # `@@` without numbers: placed as the runner places it


def split_diff(text: str) -> list[FilePatch]:
    """The diff's files and hunks, read as the runner reads them (`ci_runner.diff_text`):
    each hunk holds the lines its counts say, so a removed `-- comment` line is not a header."""
    return [
        FilePatch(
            file.header,
            tuple(
                Hunk(_start(h.old_start), _start(h.new_start), h.tail.rstrip("\r\n"), h.body)
                for h in file.hunks
            ),
        )
        for file in read_diff(text)
    ]


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
