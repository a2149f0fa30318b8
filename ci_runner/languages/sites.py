"""A planted tripwire site: its secret names and the files that carry it, and fresh names.

Names are drawn afresh for every run from the system's CSPRNG, so a patch written before the
run cannot know them; they carry no fixed word either, so code cannot pick them out by a
pattern such as `*tripwire*` and spare them while it rewrites every other result.
"""

from __future__ import annotations

import os
import secrets
import stat
import string
from dataclasses import dataclass, field
from pathlib import Path

_FIRST = string.ascii_lowercase
_REST = string.ascii_lowercase + string.digits
TOKEN_CHARS = 12  # 26 * 36**11: not guessed, and no real test id holds one by chance


def token() -> str:
    """A fresh secret identifier part: lowercase letters and digits, a letter first."""
    return secrets.choice(_FIRST) + "".join(secrets.choice(_REST) for _ in range(TOKEN_CHARS - 1))


@dataclass(frozen=True)
class Site:
    """One place the runner planted its tripwire tests.

    `label` names the place the same way in every run (`python tests/unit`); `names` are the
    identifiers a test id of the site's tripwires holds, the first of which ends the part of
    the id that names the site (the prefix); `passing` and `failing` are the names only the
    test that must pass, or fail, has. `files` maps paths in the workspace to their whole new
    content (a new test file, or a crate root with the tripwire module appended).
    """

    label: str
    names: tuple[str, ...]
    passing: str
    failing: str | None
    files: dict[str, bytes] = field(default_factory=dict, compare=False)

    def holds_name(self, test_id: str) -> bool:
        return any(name in test_id for name in self.names)

    def prefix(self, test_id: str) -> str:
        """The part of one of its tripwires' ids that names the site (`tests.unit.`)."""
        found = [test_id.find(name) for name in self.names if name in test_id]
        return test_id[: min(found)] if found else test_id


def appended(source: bytes, block: str) -> bytes:
    """A file's bytes with `block` after them, on lines of its own (a newline first when the
    file does not end with one): the tripwire goes at the end, and no line of the file moves."""
    lead = b"" if source.endswith(b"\n") or not source else b"\n"
    return source + lead + block.encode()


def plain_file(root: Path, path: Path) -> bool:
    """Whether `path` is a regular file inside `root` reached through no symlink: the host's
    copy of a workspace is read and written here, and a repo's symlink must not lead out."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
        relative = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    except (OSError, ValueError):
        return False
    if relative.startswith(".."):
        return False
    return os.path.realpath(path) == os.path.join(os.path.realpath(root), relative)


def plain_dir(root: Path, path: Path) -> bool:
    """Whether `path` is a directory inside `root` reached through no symlink."""
    try:
        relative = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    except ValueError:
        return False
    if relative.startswith(".."):
        return False
    real = os.path.realpath(path)
    return os.path.isdir(real) and real == os.path.normpath(
        os.path.join(os.path.realpath(root), relative)
    )
