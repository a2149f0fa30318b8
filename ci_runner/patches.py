"""Safe application of unified diffs to a checkout: refuse before anything runs.

Every diff is first normalized (`diff_text`), so plain `--- a/x` / `+++ b/x` diffs with
miscounted hunks are accepted wherever a diff is. A file whose hunks do not apply exactly
is handed to `fuzzy_apply`, and each hunk placed at an offset or with fuzz is recorded.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath

import pygit2

from ci_runner.diff_text import bidi_problem, normalize_diff
from ci_runner.errors import PatchError
from ci_runner.fuzzy_apply import FuzzUnavailable, HunkMismatch, apply_fuzzily

_SYMLINK_MODE = 0o120000
_GITLINK_MODE = 0o160000
_NAME_MAX = 255  # bytes in one path component (ext4, xfs, overlayfs)
_PATH_MAX = 4095


def parse_diff(text: str, index: int | None = None) -> pygit2.Diff:
    """The diff `text` stands for, after normalization; PatchError saying why not."""
    return _parse_normalized(normalize_diff(text, index).text, index)


def _parse_normalized(text: str, index: int | None) -> pygit2.Diff:
    try:
        diff = pygit2.Diff.parse_diff(text)
    except (pygit2.GitError, ValueError) as exc:
        detail = exc.args[0] if exc.args else exc
        raise PatchError("(diff)", f"not a unified diff: {detail}", index) from exc
    if len(diff) == 0:
        raise PatchError("(diff)", "no file changes found in the diff", index)
    return diff


def _unsafe_path_reason(path: str) -> str | None:
    if not path:
        return "empty path"
    if path.startswith("/") or "\\" in path:
        return "absolute or backslashed path"
    parts = PurePosixPath(path).parts
    if ".." in parts:
        return "path leaves the repository (..)"
    if any(part.lower() == ".git" for part in parts):
        return "path is inside .git/"
    if any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in path):
        return "path holds control characters"
    if (problem := bidi_problem(path)) is not None:
        return problem
    if any(len(part.encode(errors="replace")) > _NAME_MAX for part in parts):
        return f"a path component is longer than {_NAME_MAX} bytes"
    if len(path.encode(errors="replace")) > _PATH_MAX:
        return f"path is longer than {_PATH_MAX} bytes"
    return None


def _shown(path: str) -> str:
    """A path as an error names it: escaped (quoted, `\\u202e`) when printing it as it is could
    show another name or move the terminal's cursor."""
    unsafe = any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in path) or bidi_problem(path)
    return repr(path) if unsafe else path


def _link_target_problem(target: str) -> str | None:
    """Why a symlink the diff writes may point outside its own directory, or None.

    Only the target's own text is judged, never what it resolves to now: `a/..` is `.` on
    paper but not once `a` is (or becomes) a link itself, so no `..` is taken at all."""
    if not target:
        return "creates a symlink without a target"
    shown = repr(target[:200])
    if target.startswith("/"):
        return f"creates a symlink to an absolute path ({shown})"
    if ".." in PurePosixPath(target).parts:
        return f"creates a symlink whose target leaves its directory ({shown} holds ..)"
    if (reason := _unsafe_path_reason(target)) is not None:
        return f"creates a symlink to an unsafe path ({shown}: {reason})"
    return None


def _symlink_on_the_way(root: Path, path: str) -> str | None:
    """The first component of `path` that is a symlink in the checkout, if any."""
    current = root
    for part in PurePosixPath(path).parts:
        current = current / part
        if current.is_symlink():
            return str(current.relative_to(root))
        if not current.exists():
            return None
    return None


def _link_target(root: Path, patch: pygit2.Patch) -> str:
    """What the link the diff writes will point to: its added text, or (a link renamed or
    copied as it is) the target it has in the checkout."""
    added = [line.content for hunk in patch.hunks for line in hunk.lines if line.origin == "+"]
    if added or not patch.delta.old_file.path:
        return "".join(added).strip()
    try:
        return os.readlink(root / patch.delta.old_file.path)
    except OSError:
        return ""


def file_patches(diff: pygit2.Diff) -> list[pygit2.Patch]:
    return [patch for patch in diff if patch is not None]


def check_diff(root: Path, diff: pygit2.Diff, index: int | None = None) -> None:
    """Raise PatchError for the first delta that could touch anything outside the tree."""
    for patch in file_patches(diff):
        delta = patch.delta
        for side in (delta.old_file, delta.new_file):
            if side.path is None or (side is delta.old_file and delta.status_char() == "A"):
                continue
            reason = _unsafe_path_reason(side.path)
            if reason:
                raise PatchError(_shown(side.path), reason, index)
            through = _symlink_on_the_way(root, side.path)
            if through:
                raise PatchError(side.path, f"path goes through the symlink {through}", index)
        path = delta.new_file.path or delta.old_file.path
        if delta.is_binary:
            raise PatchError(path, "binary changes are not supported", index)
        if delta.new_file.mode == _GITLINK_MODE or delta.old_file.mode == _GITLINK_MODE:
            raise PatchError(path, "submodule changes are not supported", index)
        if delta.new_file.mode == _SYMLINK_MODE and delta.status_char() != "D":
            if delta.old_file.mode not in (_SYMLINK_MODE, 0) and delta.status_char() != "A":
                # the link's target would be the file's text, which the diff need not show
                raise PatchError(path, "turns a file into a symlink: not supported", index)
            problem = _link_target_problem(_link_target(root, patch))
            if problem is not None:
                raise PatchError(path, problem, index)


def apply_diffs(root: Path, repo: pygit2.Repository, diffs: tuple[str, ...]) -> tuple[str, ...]:
    """Check then apply each diff in order to the working tree; name the file and hunk that fail.

    Returns what had to be repaired or fuzzed, one note per file and hunk, each starting
    with the diff's number.
    """
    notes: list[str] = []
    for index, text in enumerate(diffs):
        normalized = normalize_diff(text, index)
        diff = _parse_normalized(normalized.text, index)
        check_diff(root, diff, index)
        repaired = list(normalized.notes)
        try:
            if not _applied_exactly(repo, diff):
                for section in split_by_file(normalized.text):
                    repaired.extend(_apply_section(root, repo, section, index))
        except pygit2.GitError as exc:
            raise PatchError("(diff)", f"cannot be applied: {exc}", index) from exc
        notes.extend(f"diff #{index + 1}: {note}" for note in repaired)
    return tuple(notes)


_WORKDIR = pygit2.enums.ApplyLocation.WORKDIR


def _apply_section(root: Path, repo: pygit2.Repository, section: str, index: int) -> list[str]:
    """Apply one file's part of a diff, exactly if it can be, else with fuzz; say how."""
    single = pygit2.Diff.parse_diff(section)
    patches = file_patches(single)
    if not patches:
        return []
    patch = patches[0]
    path = patch.delta.new_file.path or patch.delta.old_file.path
    try:
        if _applied_exactly(repo, single):
            return []
        if _deleted_regardless_of_mode(root, patch):
            return [f"{path}: deleted; the diff's file mode differs from the tree's"]
        if not _can_fuzz(root, patch):
            raise PatchError(path, _why_not(root, patch), index)
        target = root / path
        result = apply_fuzzily(_read_regular(target), section[section.index("\n@@") + 1 :])
        _write_regular(target, result.content)
    except HunkMismatch as exc:
        raise PatchError(path, f"does not apply: {_name_hunk(patch, exc)}", index) from exc
    except FuzzUnavailable as exc:
        raise PatchError(path, f"does not apply exactly, and {exc}", index) from exc
    except OSError as exc:
        raise PatchError(path, f"cannot be written: {exc.strerror or exc}", index) from exc
    return [f"{path}: {note}" for note in result.notes] or [
        f"{path}: applied by GNU patch after the exact application failed"
    ]


def _applied_exactly(repo: pygit2.Repository, diff: pygit2.Diff) -> bool:
    """Apply with libgit2 if every hunk matches exactly; False (and nothing written) if not."""
    if not repo.applies(diff, _WORKDIR):
        return False
    try:
        repo.apply(diff, _WORKDIR)
    except pygit2.GitError:  # e.g. a deletion whose stated mode is not the file's
        return False
    return True


def _deleted_regardless_of_mode(root: Path, patch: pygit2.Patch) -> bool:
    """A deletion whose lines are exactly the file's, whatever mode it states: delete it."""
    path = patch.delta.old_file.path
    if patch.delta.status_char() != "D" or not _is_regular(root / path):
        return False
    removed = b"".join(
        line.raw_content for h in patch.hunks for line in h.lines if line.origin == "-"
    )
    if _read_regular(root / path) != removed:
        return False
    os.unlink(root / path)
    return True


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def _can_fuzz(root: Path, patch: pygit2.Patch) -> bool:
    """Only edits of an existing regular file, with no rename or mode change, are fuzzed."""
    delta = patch.delta
    if not (
        delta.status_char() == "M"
        and delta.old_file.path == delta.new_file.path
        and delta.old_file.mode == delta.new_file.mode
        and not delta.is_binary
        and patch.hunks
    ):
        return False
    return _is_regular(root / delta.old_file.path)


def _name_hunk(patch: pygit2.Patch, exc: HunkMismatch) -> str:
    """`hunk #N (@@ ... @@, first removed or context line)`: enough to find it in the diff."""
    if not 1 <= exc.number <= len(patch.hunks):
        return f"hunk #{exc.number} does not match the file{exc.detail}"
    hunk = patch.hunks[exc.number - 1]
    header = hunk.header.strip()
    anchor = next((line for line in hunk.lines if line.origin == "-"), None) or next(
        (line for line in hunk.lines if line.origin == " "), None
    )
    where = ""
    if anchor is not None:
        verb = "removing" if anchor.origin == "-" else "at"
        where = f", {verb} {anchor.content.rstrip()[:80]!r}"
    return f"hunk #{exc.number} ({header}{where}) does not match the file{exc.detail}"


def _read_regular(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def _write_regular(path: Path, content: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "wb") as handle:
        handle.write(content)


def split_by_file(text: str) -> list[str]:
    """The per-file sections of a normalized diff, so a failure can be pinned on one file."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.startswith("diff --git ")]
    if not starts:
        return [text]
    bounds = [*starts[1:], len(lines)]
    return ["".join(lines[a:b]) for a, b in zip(starts, bounds, strict=True)]


def _why_not(root: Path, patch: pygit2.Patch) -> str:
    status = patch.delta.status_char()
    old_path = patch.delta.old_file.path
    exists = os.path.lexists(root / old_path) if old_path else False
    if status == "A" and os.path.lexists(root / patch.delta.new_file.path):
        return "does not apply: the file already exists"
    if status != "A" and not exists:
        return "does not apply: no such file in the tree"
    if status == "D":
        return "does not apply: the file differs from the lines the diff deletes"
    return "does not apply: its hunks do not match the file"
