"""Unified diffs as people and models write them, rewritten as git-style diffs libgit2 parses.

Chat models answer with plain `--- a/x` / `+++ b/x` hunks (no `diff --git` line), with or
without `a/` `b/` prefixes, with prose or fences around them and with hunk line counts that
do not add up. libgit2 refuses all of these, so every diff is normalized once, here, before it
is parsed: hunks are recounted the way `git apply --recount` does (the counts in `@@` lines are
ignored, the body decides), blank lines inside a hunk are empty context lines, and everything
that is not part of a file section is dropped. A diff that is already clean comes out
unchanged, so the function is idempotent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ci_runner.errors import PatchError

MAX_DIFF_BYTES = 16 * 1024 * 1024
"""Larger diffs are refused before parsing: real fixes are far smaller, and parsing one
costs several times its size in memory (a 200 MB diff took 843 MiB)."""

_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)", re.DOTALL)
_TIMESTAMP = re.compile(r"\s+\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?: ?[+-]\d{4})?$")
_BODY_MARKS = (" ", "+", "-", "\\")


@dataclass(frozen=True)
class NormalizedDiff:
    text: str
    notes: tuple[str, ...] = ()  # what had to be repaired, one line per file and hunk


@dataclass
class _Hunk:
    old_start: int | None
    new_start: int | None
    old_count: int | None
    new_count: int | None
    tail: str  # the function context after the second `@@`, with its line ending
    body: list[str] = field(default_factory=list)


@dataclass
class _Section:
    git_header: list[str]  # `diff --git` and its extended header lines, verbatim
    old_line: str | None = None  # the `--- ` line
    new_line: str | None = None  # the `+++ ` line
    hunks: list[_Hunk] = field(default_factory=list)
    raw: list[str] | None = None  # binary sections are passed through untouched


def check_text(text: str, index: int | None = None) -> None:
    """Refuse an empty, binary or oversized diff before anything costly is done with it."""
    if not text or text.isspace():  # not strip(): that would copy a huge diff
        raise PatchError("(diff)", "the diff is empty", index)
    if "\x00" in text:
        raise PatchError("(diff)", "the diff holds NUL bytes (binary garbage)", index)
    size = len(text) if len(text) > MAX_DIFF_BYTES else len(text.encode())  # no copy if huge
    if size > MAX_DIFF_BYTES:
        mib, limit = size / (1024 * 1024), MAX_DIFF_BYTES // (1024 * 1024)
        raise PatchError("(diff)", f"the diff is {mib:.1f} MiB, over the {limit} MiB limit", index)


def _bare(line: str) -> str:
    return line.rstrip("\r\n")


def _is_file_header(lines: list[str], i: int) -> bool:
    return lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")


def _header_path(line: str) -> str:
    """The path of a `--- `/`+++ ` line, without timestamp, quotes or a leading `./`."""
    path = _bare(line)[4:]
    path = path.split("\t", 1)[0]
    path = _TIMESTAMP.sub("", path).strip()
    if len(path) >= 2 and path[0] == path[-1] == '"':
        path = _unquote(path[1:-1])
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in path):
        raise PatchError(repr(path), "path holds control characters")
    return path.removeprefix("./")


_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
_OCTAL = re.compile(r"[0-7]{3}")


def _unquote(quoted: str) -> str:
    """A path git quoted C-style (`"caf\\303\\251.py"`); unknown escapes are kept as written."""
    out = bytearray()
    i = 0
    while i < len(quoted):
        if quoted[i] == "\\" and i + 1 < len(quoted):
            if _OCTAL.fullmatch(quoted, i + 1, i + 4):
                out.append(int(quoted[i + 1 : i + 4], 8) & 0xFF)
                i += 4
                continue
            if quoted[i + 1] in _ESCAPES:
                out.append(_ESCAPES[quoted[i + 1]])
                i += 2
                continue
        out.extend(quoted[i].encode())
        i += 1
    return out.decode("utf-8", "replace")


def _plain_paths(old: str, new: str) -> tuple[str | None, str | None]:
    """Old and new path (None for /dev/null), with `a/` `b/` stripped only as a pair."""
    old_path = None if old == "/dev/null" else old
    new_path = None if new == "/dev/null" else new
    prefixed = (old_path is None or old_path.startswith("a/")) and (
        new_path is None or new_path.startswith("b/")
    )
    if prefixed and (old_path or new_path):
        old_path = old_path[2:] if old_path else None
        new_path = new_path[2:] if new_path else None
    return old_path, new_path


_GIT_HEADER_LINES = (
    "old mode ",
    "new mode ",
    "deleted file mode ",
    "new file mode ",
    "copy from ",
    "copy to ",
    "rename from ",
    "rename to ",
    "similarity index ",
    "dissimilarity index ",
    "index ",
)


def _parse(text: str) -> list[_Section]:
    lines = text.splitlines(keepends=True)
    sections: list[_Section] = []
    current: _Section | None = None
    hunk: _Hunk | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("diff --git "):
            current, hunk = _Section(git_header=[line]), None
            sections.append(current)
            i += 1
            while i < len(lines) and not (
                lines[i].startswith(("diff --git ", "@@")) or _is_file_header(lines, i)
            ):
                if lines[i].startswith(("GIT binary patch", "Binary files ")):
                    current.raw = current.git_header
                if current.raw is not None or lines[i].startswith(_GIT_HEADER_LINES):
                    current.git_header.append(lines[i])
                i += 1
            continue
        if _is_file_header(lines, i):
            if current is None or current.old_line is not None or current.raw is not None:
                current = _Section(git_header=[])
                sections.append(current)
            current.old_line, current.new_line = line, lines[i + 1]
            hunk = None
            i += 2
            continue
        if current is not None and current.raw is None and line.startswith("@@"):
            match = _HUNK.match(line)
            if match:
                old_start, old_count, new_start, new_count, tail = match.groups()
                hunk = _Hunk(
                    int(old_start),
                    int(new_start),
                    None if old_count is None else int(old_count),
                    None if new_count is None else int(new_count),
                    tail if _bare(tail).strip() else "\n",
                )
            else:  # `@@` or `@@ ... @@` without numbers: the fuzzy application places it
                hunk = _Hunk(None, None, None, None, "\n")
            current.hunks.append(hunk)
            i += 1
            continue
        if hunk is not None and (line.startswith(_BODY_MARKS) or not _bare(line)):
            hunk.body.append(line)
            i += 1
            continue
        hunk = None  # anything else ends the hunk: prose, a closing fence
        i += 1
    for section in sections:
        for h in section.hunks:
            while h.body and not _bare(h.body[-1]):  # blank lines after the hunk, not context
                h.body.pop()
    return sections


def _body_line(line: str) -> str:
    """A hunk line as git writes it: a blank line is empty context, the end has a newline."""
    if not _bare(line):
        line = " " + line
    return line if line.endswith("\n") else line + "\n"


def _recount(body: list[str]) -> tuple[int, int]:
    old = sum(1 for line in body if not _bare(line) or line[0] in " -")
    new = sum(1 for line in body if not _bare(line) or line[0] in " +")
    return old, new


def _span(start: int | None, count: int | None) -> str:
    return f"{start}" if count is None else f"{start},{count}"


def _git_span(start: int, count: int) -> str:
    """As git writes it: a count of one is left out."""
    return f"{start}" if count == 1 else f"{start},{count}"


def normalize_diff(text: str, index: int | None = None) -> NormalizedDiff:
    """`text` as a git-style diff with recounted hunks; PatchError if empty, binary or too large.

    Text holding no file section at all is returned as it is, so the parser's own
    error explains what is wrong with it.
    """
    check_text(text, index)
    sections = _parse(text)
    if not sections:
        return NormalizedDiff(text)
    out: list[str] = []
    notes: list[str] = []
    for section in sections:
        if section.raw is not None:
            out.extend(section.raw)
            continue
        try:
            _emit_section(section, out, notes)
        except PatchError as exc:
            raise PatchError(exc.path, exc.reason, index) from None
    return NormalizedDiff("".join(out), tuple(notes))


def _paths(section: _Section) -> tuple[str | None, str | None]:
    assert section.old_line is not None and section.new_line is not None
    old_raw, new_raw = _header_path(section.old_line), _header_path(section.new_line)
    if section.git_header:  # git's own diffs always carry the a/ b/ pair
        old = None if old_raw == "/dev/null" else old_raw.removeprefix("a/")
        new = None if new_raw == "/dev/null" else new_raw.removeprefix("b/")
        return old, new
    return _plain_paths(old_raw, new_raw)


def _plain_header(section: _Section, old: str | None, new: str | None) -> tuple[list[str], bool]:
    """A `diff --git` header for a plain section, and whether it creates the file."""
    creates = old is None or (
        bool(section.hunks)
        and section.hunks[0].old_start == 0
        and all(_recount(h.body)[0] == 0 for h in section.hunks)
    )
    if creates:
        name = new or old
        return [f"diff --git a/{name} b/{name}\n", "new file mode 100644\n"], True
    if new is None:
        return [f"diff --git a/{old} b/{old}\n", "deleted file mode 100644\n"], False
    if old != new:
        return [
            f"diff --git a/{old} b/{new}\n",
            f"rename from {old}\n",
            f"rename to {new}\n",
        ], False
    return [f"diff --git a/{old} b/{new}\n"], False


def _emit_section(section: _Section, out: list[str], notes: list[str]) -> None:
    if section.old_line is None:  # a git header alone: mode change or pure rename
        out.extend(section.git_header)
        return
    old, new = _paths(section)
    if section.git_header:
        out.extend(section.git_header)
    else:
        header, creates = _plain_header(section, old, new)
        out.extend(header)
        if creates:
            old = None
    name = new or old or "(diff)"
    out.append("--- /dev/null\n" if old is None else f"--- a/{old}\n")
    out.append("+++ /dev/null\n" if new is None else f"+++ b/{new}\n")
    shift = 0
    for number, hunk in enumerate(section.hunks, 1):
        if not hunk.body:
            notes.append(f"{name}: hunk #{number} is empty and was dropped")
            continue
        old_count, new_count = _recount(hunk.body)
        if hunk.old_start is None:
            notes.append(f"{name}: hunk #{number} has no line numbers")
        old_start = 0 if old is None else (hunk.old_start or 1)
        if old is not None and hunk.old_start == 0 and old_count > 0:
            old_start = 1
        if new is None:
            new_start = 0
        elif old is None:
            new_start = 1
        elif old_count == 0:
            new_start = old_start + shift + 1
        elif new_count == 0:
            new_start = old_start + shift - 1
        else:
            new_start = old_start + shift
        shift += new_count - old_count
        said = (
            1 if hunk.old_count is None else hunk.old_count,
            1 if hunk.new_count is None else hunk.new_count,
        )
        if hunk.old_start is not None and said != (old_count, new_count):
            notes.append(
                f"{name}: hunk #{number} line counts recounted "
                f"(@@ -{_span(hunk.old_start, hunk.old_count)} "
                f"+{_span(hunk.new_start, hunk.new_count)} @@ "
                f"holds -{old_count} +{new_count} lines)"
            )
        spans = f"-{_git_span(old_start, old_count)} +{_git_span(new_start, new_count)}"
        out.append(f"@@ {spans} @@{hunk.tail}")
        out.extend(_body_line(line) for line in hunk.body)
