"""Hunks that do not apply exactly, applied the way `patch --fuzz=2` does, saying how.

Models get line numbers and a context line or two wrong. GNU patch finds such a hunk at
another offset and, with fuzz, ignores up to two context lines at its ends; every hunk placed
that way is reported so a result can record that fuzz was needed. patch runs on a copy of one
file in a private directory (never in the checkout), so it cannot follow a symlink or touch
another path whatever the diff says; the caller writes the result back.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

FUZZ = 2  # GNU patch's default: at most two context lines at each end of a hunk may differ
_TIMEOUT_S = 60
_PLACED = re.compile(
    r"^Hunk #(\d+) succeeded at (\d+)(?: with fuzz (\d+))?(?: \(offset (-?\d+) lines?\))?\.$",
    re.MULTILINE,
)
_FAILED = re.compile(r"^Hunk #(\d+) FAILED at (\d+)", re.MULTILINE)


class HunkMismatch(Exception):
    """Hunk `number` (1-based) matches nowhere in the file, even with fuzz."""

    def __init__(self, number: int, detail: str = "") -> None:
        self.number = number
        self.detail = detail
        super().__init__(f"hunk #{number} does not match the file{detail}")


class FuzzUnavailable(Exception):
    """GNU patch is missing or did not finish in time; the message says which."""


@dataclass(frozen=True)
class FuzzyResult:
    content: bytes
    notes: tuple[str, ...]  # one per hunk that needed an offset, fuzz or other line endings


def _uses_crlf(content: bytes) -> bool:
    return content.count(b"\r\n") > 0 and content.count(b"\r\n") == content.count(b"\n")


def _to_crlf(hunks: str) -> str:
    """Hunk lines with CRLF endings, for a file whose lines all end in CRLF."""
    out = []
    for line in hunks.splitlines(keepends=True):
        if line.startswith(("@@", "\\")) or line.endswith("\r\n"):
            out.append(line)
        else:
            out.append(line.removesuffix("\n") + "\r\n")
    return "".join(out)


def apply_fuzzily(content: bytes, hunks: str) -> FuzzyResult:
    """`content` with `hunks` (the `@@` part of one file's diff) applied; HunkMismatch if not.

    Raises FuzzUnavailable when GNU patch is not installed or runs over its time.
    """
    program = shutil.which("patch")
    if program is None:
        raise FuzzUnavailable("GNU patch, needed to apply inexact hunks, is not installed")
    notes: list[str] = []
    if _uses_crlf(content) and "\r\n" not in hunks:
        hunks = _to_crlf(hunks)
        notes.append("the diff's line endings were changed to the file's CRLF")
    with tempfile.TemporaryDirectory(prefix="arena-fuzz-") as scratch:
        work = Path(scratch)
        (work / "original").write_bytes(content)
        (work / "hunks.diff").write_bytes(f"--- a/original\n+++ b/original\n{hunks}".encode())
        try:
            done = subprocess.run(
                [
                    program,
                    "--force",  # never ask, and never take a hunk as reversed (--batch would)
                    f"--fuzz={FUZZ}",
                    "--no-backup-if-mismatch",
                    "--reject-file=rejects",
                    "--output=patched",
                    "--input=hunks.diff",
                    "original",
                ],
                cwd=work,
                stdin=subprocess.DEVNULL,
                env={"LC_ALL": "C", "PATH": os.defpath},
                capture_output=True,
                encoding="utf-8",
                errors="replace",
                timeout=_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise FuzzUnavailable(f"GNU patch took over {_TIMEOUT_S} s") from exc
        failed = _FAILED.search(done.stdout)
        if failed:
            raise HunkMismatch(int(failed.group(1)), f" (expected at line {failed.group(2)})")
        if done.returncode != 0:
            detail = (done.stderr or done.stdout).strip().splitlines()
            raise HunkMismatch(1, f": patch said {detail[-1] if detail else done.returncode}")
        patched = (work / "patched").read_bytes()
    for match in _PLACED.finditer(done.stdout):
        number, line, fuzz, offset = match.groups()
        how = []
        if fuzz:
            how.append(f"fuzz {fuzz}")
        if offset:
            how.append(f"offset {offset} lines")
        if how:
            notes.append(f"hunk #{number} applied at line {line} with {' and '.join(how)}")
    return FuzzyResult(patched, tuple(notes))
