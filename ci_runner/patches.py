"""Safe application of unified diffs to a checkout: refuse before anything runs."""

from __future__ import annotations

import os
import posixpath
from pathlib import Path, PurePosixPath

import pygit2

from ci_runner.errors import PatchError

_SYMLINK_MODE = 0o120000
_GITLINK_MODE = 0o160000


def parse_diff(text: str, index: int | None = None) -> pygit2.Diff:
    if not text.strip():
        raise PatchError("(diff)", "the diff is empty", index)
    if "\x00" in text:
        raise PatchError("(diff)", "the diff holds NUL bytes (binary garbage)", index)
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


def _link_target(patch: pygit2.Patch) -> str:
    added = [line.content for hunk in patch.hunks for line in hunk.lines if line.origin == "+"]
    return "".join(added).strip()


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
                raise PatchError(side.path, reason, index)
            through = _symlink_on_the_way(root, side.path)
            if through:
                raise PatchError(side.path, f"path goes through the symlink {through}", index)
        path = delta.new_file.path or delta.old_file.path
        if delta.is_binary:
            raise PatchError(path, "binary changes are not supported", index)
        if delta.new_file.mode == _GITLINK_MODE or delta.old_file.mode == _GITLINK_MODE:
            raise PatchError(path, "submodule changes are not supported", index)
        if delta.new_file.mode == _SYMLINK_MODE and delta.status_char() != "D":
            target = _link_target(patch)
            resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
            if target.startswith("/") or resolved.startswith(".."):
                raise PatchError(
                    path, f"creates a symlink pointing outside the tree ({target})", index
                )


def apply_diffs(root: Path, repo: pygit2.Repository, diffs: tuple[str, ...]) -> None:
    """Check then apply each diff in order to the working tree; name the file that fails."""
    for index, text in enumerate(diffs):
        diff = parse_diff(text, index)
        check_diff(root, diff, index)
        location = pygit2.enums.ApplyLocation.WORKDIR
        if repo.applies(diff, location):
            repo.apply(diff, location)
            continue
        for section in split_by_file(text):
            single = pygit2.Diff.parse_diff(section)
            patches = file_patches(single)
            if patches and not repo.applies(single, location):
                patch = patches[0]
                path = patch.delta.new_file.path or patch.delta.old_file.path
                raise PatchError(path, _why_not(root, patch), index)
        raise PatchError("(diff)", "the diff does not apply as a whole", index)


def split_by_file(text: str) -> list[str]:
    """The per-file sections of a diff, so a failure can be pinned on one file."""
    lines = text.splitlines(keepends=True)
    git_style = any(line.startswith("diff --git ") for line in lines)
    starts = [
        i
        for i, line in enumerate(lines)
        if (
            line.startswith("diff --git ")
            if git_style
            else line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")
        )
    ]
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
    return "does not apply: its hunks do not match the file"
