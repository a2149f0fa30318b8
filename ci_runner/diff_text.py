"""Unified diffs as people and models write them, rewritten as git-style diffs libgit2 parses.

Chat models answer with plain `--- a/x` / `+++ b/x` hunks (no `diff --git` line), with or
without `a/` `b/` prefixes, with prose or fences around them, with CRLF line endings and
with hunk line counts that do not add up. libgit2 refuses all of these, so every diff is
normalized once, here, before it is parsed.

A hunk is read by its own structure: it holds exactly the lines its `@@` counts say, so a
line that closes a fence, a removed `-- comment` that looks like a `--- ` file header or a
prose bullet after the hunk is read for what the counts make it. Where the counts cannot be
right (a line that is no hunk line comes first, or more hunk lines run on straight into the
next hunk, file or closing fence), the body decides, as `git apply --recount` does. A hunk the
text ends inside of, short of its counts, is reported as cut short. Blank lines inside a hunk
are empty context lines, and everything that is not part of a file section is dropped. A diff
that is already clean comes out unchanged, so the function is idempotent.
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
_CLOSING_FENCE = re.compile(r"^\s*(?:`{3,}|~{3,})\s*$")
# characters that reorder how the text around them is shown (U+202E shows `evil\u202egnp.py`
# as `evilyp.png`): a path holding one reads as another name, wherever it is printed
_BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def bidi_problem(path: str) -> str | None:
    """Why `path` cannot be shown as itself (the bidirectional controls it holds), or None."""
    found = sorted(set(_BIDI_CONTROLS.findall(path)))
    if not found:
        return None
    codes = ", ".join(f"U+{ord(c):04X}" for c in found)
    return f"path holds bidirectional text controls ({codes}) that show it as another name"


@dataclass(frozen=True)
class NormalizedDiff:
    text: str
    notes: tuple[str, ...] = ()  # what had to be repaired, one line per file and hunk
    cut_short: str | None = None  # the hunk the text ends inside of, short of its counts


@dataclass(frozen=True)
class DiffHunk:
    """One hunk as written: its `@@` numbers (None where the line has none) and its lines,
    each ending in a newline, a blank one read as the empty context line it stands for."""

    old_start: int | None
    new_start: int | None
    tail: str  # what follows the second `@@`, line ending included
    body: tuple[str, ...]


@dataclass(frozen=True)
class FileDiff:
    """One file's section of a diff as written, and the lines of the text it was read from."""

    header: tuple[str, ...]  # `diff --git` and its extended lines, then `---`/`+++`
    hunks: tuple[DiffHunk, ...]
    first_line: int
    end_line: int  # one past the last line read into the section


@dataclass
class _Hunk:
    old_start: int | None
    new_start: int | None
    old_count: int | None
    new_count: int | None
    tail: str  # the function context after the second `@@`, with its line ending
    body: list[str] = field(default_factory=list)
    cut_short: bool = False  # the text ends before the lines its counts say


@dataclass
class _Section:
    git_header: list[str]  # `diff --git` and its extended header lines, verbatim
    first_line: int
    end_line: int
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
    if (problem := bidi_problem(path)) is not None:  # named as the file, escaped
        raise PatchError(repr(path[2:] if path.startswith(("a/", "b/")) else path), problem)
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
    """Old and new path (None for /dev/null), with `a/` `b/` stripped as a pair, or from the
    one side that has it when that makes the two sides the same file (`--- a/x`, `+++ x`)."""
    old_path = None if old == "/dev/null" else old
    new_path = None if new == "/dev/null" else new
    prefixed = (old_path is None or old_path.startswith("a/")) and (
        new_path is None or new_path.startswith("b/")
    )
    if prefixed and (old_path or new_path):
        old_path = old_path[2:] if old_path else None
        new_path = new_path[2:] if new_path else None
    elif old_path is not None and old_path.startswith("a/") and old_path[2:] == new_path:
        old_path = new_path
    elif new_path is not None and new_path.startswith("b/") and new_path[2:] == old_path:
        new_path = old_path
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


def _takes(line: str) -> tuple[int, int] | None:
    """The old and new lines a hunk line stands for; None if it cannot be a hunk line."""
    bare = _bare(line)
    if not bare or bare[0] == " ":
        return 1, 1  # a blank line is an empty context line whose space was lost
    return {"-": (1, 0), "+": (0, 1), "\\": (0, 0)}.get(bare[0])


def _hunk_run_end(lines: list[str], i: int) -> int:
    """Where the run of non-blank hunk lines starting at `i` ends."""
    while (
        i < len(lines)
        and _bare(lines[i])
        and _takes(lines[i]) is not None
        and not _is_file_header(lines, i)
    ):
        i += 1
    return i


def _diff_goes_on(lines: list[str], i: int) -> bool:
    """Whether line `i` starts another hunk or file, or closes the fence the diff is in."""
    return i < len(lines) and (
        lines[i].startswith(("@@", "diff --git "))
        or _is_file_header(lines, i)
        or bool(_CLOSING_FENCE.match(lines[i]))
    )


def _read_body(lines: list[str], i: int, hunk: _Hunk) -> int:
    """Read the hunk's lines from `lines[i:]` into its body; the index of the line after it.

    A hunk with numbers takes exactly the lines its counts say, whatever they look like.
    Its counts are wrong, and the body decides as `git apply --recount` does, when a line
    that cannot be a hunk line comes before they are met, or when more hunk lines follow them
    straight up to another hunk, file or closing fence; otherwise what follows the counted
    lines is not the hunk's (prose, a bullet). A hunk the text ends inside of is cut short.
    """
    start = i
    if hunk.old_start is not None:
        old_left = 1 if hunk.old_count is None else hunk.old_count
        new_left = 1 if hunk.new_count is None else hunk.new_count
        while i < len(lines) and (old_left or new_left):
            takes = _takes(lines[i])
            if takes is None or takes[0] > old_left or takes[1] > new_left:
                break
            hunk.body.append(lines[i])
            old_left, new_left = old_left - takes[0], new_left - takes[1]
            i += 1
        if not (old_left or new_left):
            if i < len(lines) and lines[i].startswith("\\"):
                hunk.body.append(lines[i])
                i += 1
            run_end = _hunk_run_end(lines, i)
            if run_end > i and _diff_goes_on(lines, run_end):
                hunk.body.extend(lines[i:run_end])
                i = run_end
            return i
        hunk.cut_short = i == len(lines)
        if not hunk.cut_short:
            hunk.body.clear()
            i = start
    while i < len(lines) and _takes(lines[i]) is not None and not _is_file_header(lines, i):
        hunk.body.append(lines[i])
        i += 1
    while hunk.body and not _bare(hunk.body[-1]):  # blank lines after the hunk, not context
        hunk.body.pop()
    return i


def _hunk_at(line: str) -> _Hunk:
    match = _HUNK.match(line)
    if not match:  # `@@` or `@@ ... @@` without numbers: the fuzzy application places it
        return _Hunk(None, None, None, None, "\n")
    old_start, old_count, new_start, new_count, tail = match.groups()
    return _Hunk(
        int(old_start),
        int(new_start),
        None if old_count is None else int(old_count),
        None if new_count is None else int(new_count),
        tail if _bare(tail).strip() else "\n",
    )


def _parse(text: str) -> list[_Section]:
    lines = text.splitlines(keepends=True)
    sections: list[_Section] = []
    current: _Section | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("diff --git "):
            current = _Section(git_header=[line], first_line=i, end_line=i + 1)
            sections.append(current)
            i += 1
            while i < len(lines) and not (
                lines[i].startswith(("diff --git ", "@@")) or _is_file_header(lines, i)
            ):
                if lines[i].startswith(("GIT binary patch", "Binary files ")):
                    current.raw = current.git_header
                if current.raw is None and not lines[i].startswith(_GIT_HEADER_LINES):
                    break  # the extended header ends at its first other line
                current.git_header.append(lines[i])
                i += 1
            current.end_line = i
            continue
        if _is_file_header(lines, i):
            if current is None or current.old_line is not None or current.raw is not None:
                current = _Section(git_header=[], first_line=i, end_line=i)
                sections.append(current)
            current.old_line, current.new_line = line, lines[i + 1]
            i += 2
            current.end_line = i
            continue
        if current is not None and current.raw is None and line.startswith("@@"):
            hunk = _hunk_at(line)
            current.hunks.append(hunk)
            i = current.end_line = _read_body(lines, i + 1, hunk)
            continue
        i += 1  # prose, a fence, anything that is no part of a file section
    return sections


def read_diff(text: str) -> tuple[FileDiff, ...]:
    """The file sections `text` holds, as written, each hunk read by its counts."""
    return tuple(
        FileDiff(
            header=tuple(
                section.git_header
                + [line for line in (section.old_line, section.new_line) if line is not None]
            ),
            hunks=tuple(
                DiffHunk(h.old_start, h.new_start, h.tail, tuple(map(_body_line, h.body)))
                for h in section.hunks
            ),
            first_line=section.first_line,
            end_line=section.end_line,
        )
        for section in _parse(text)
    )


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
    cut_short: str | None = None
    for section in sections:
        if section.raw is not None:
            out.extend(section.raw)
            continue
        try:
            cut_short = _emit_section(section, out, notes) or cut_short
        except PatchError as exc:
            raise PatchError(exc.path, exc.reason, index) from None
    return NormalizedDiff("".join(out), tuple(notes), cut_short)


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


_HEADER_ORDER = (
    ("old mode ", "new mode ", "deleted file mode ", "new file mode "),
    ("similarity index ", "dissimilarity index "),
    ("rename from ", "copy from "),
    ("rename to ", "copy to "),
    ("index ",),
)


def _header_rank(line: str) -> int:
    return next((r for r, kinds in enumerate(_HEADER_ORDER) if line.startswith(kinds)), 0)


def _git_header(lines: list[str], has_hunks: bool) -> list[str]:
    """A `diff --git` header in the order git writes it, with the lines libgit2 needs and
    models leave out: a similarity index before `rename from` (or `copy from`), and an
    `index` line before hunks that follow a rename or a mode change."""
    extended = lines[1:]

    def has(*kinds: str) -> bool:
        return any(line.startswith(kinds) for line in extended)

    moves = has("rename from ", "copy from ")
    if moves and not has("similarity index ", "dissimilarity index "):
        extended = [*extended, "similarity index 100%\n"]
    if has_hunks and (moves or has("old mode ", "new mode ")) and not has("index "):
        extended = [*extended, "index 0000000..0000000\n"]
    return [lines[0], *sorted(extended, key=_header_rank)]  # stable: git's own order is kept


def _lf(line: str) -> str:
    return line[:-2] + "\n" if line.endswith("\r\n") else line


def _read_as_lf(section: _Section) -> bool:
    """Whether the section came with CRLF line endings (its own header lines end in CRLF, which
    git never writes) and was read as LF; a file that has CRLF gets them back when applied."""
    heads = [*section.git_header[:1], *(x for x in (section.old_line, section.new_line) if x)]
    if not any(line.endswith("\r\n") for line in heads):
        return False
    section.git_header = [_lf(line) for line in section.git_header]
    section.old_line = _lf(section.old_line) if section.old_line else None
    section.new_line = _lf(section.new_line) if section.new_line else None
    for hunk in section.hunks:
        hunk.tail = _lf(hunk.tail)
        hunk.body = [_lf(line) for line in hunk.body]
    return True


def _emit_section(section: _Section, out: list[str], notes: list[str]) -> str | None:
    """Write the section as git would; which hunk the text ends inside of, if one does."""
    crlf = _read_as_lf(section)
    if section.old_line is None:  # a git header alone: mode change or pure rename
        out.extend(_git_header(section.git_header, False))
        return None
    old, new = _paths(section)
    if section.git_header:
        header = section.git_header
    else:
        header, creates = _plain_header(section, old, new)
        if creates:
            old = None
    name = new or old or "(diff)"
    if crlf:
        notes.append(f"{name}: the diff's CRLF line endings were read as LF")
    out.extend(_git_header(header, bool(section.hunks)))
    out.append("--- /dev/null\n" if old is None else f"--- a/{old}\n")
    out.append("+++ /dev/null\n" if new is None else f"+++ b/{new}\n")
    cut_short = None
    shift = 0
    for number, hunk in enumerate(section.hunks, 1):
        said = (
            1 if hunk.old_count is None else hunk.old_count,
            1 if hunk.new_count is None else hunk.new_count,
        )
        written = (
            f"@@ -{_span(hunk.old_start, hunk.old_count)} "
            f"+{_span(hunk.new_start, hunk.new_count)} @@"
        )
        old_count, new_count = _recount(hunk.body)
        if hunk.cut_short:
            cut_short = (
                f"{name}: hunk #{number} ({written}) is cut short: the text ends after "
                f"{old_count} of its {said[0]} old and {new_count} of its {said[1]} new lines"
            )
        if not hunk.body:
            notes.append(f"{name}: hunk #{number} is empty and was dropped")
            continue
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
        if hunk.old_start is not None and said != (old_count, new_count):
            notes.append(
                f"{name}: hunk #{number} line counts recounted "
                f"({written} holds -{old_count} +{new_count} lines)"
            )
        spans = f"-{_git_span(old_start, old_count)} +{_git_span(new_start, new_count)}"
        out.append(f"@@ {spans} @@{hunk.tail}")
        out.extend(_body_line(line) for line in hunk.body)
    return cut_short
