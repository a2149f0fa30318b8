"""Where the team's shared test data lies (`shared/data` beside the repository), and mirrors
of its git bundles.

CI checks the repository out beside `shared/`; a clone elsewhere (a scratch directory)
names the folder with `ARENA_SHARED_DATA`, else the team's usual place is tried.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

_REPO = Path(__file__).resolve().parents[1]


def shared_data() -> Path:
    if given := os.environ.get("ARENA_SHARED_DATA"):
        return Path(given)
    for candidate in (_REPO.parent / "shared" / "data", Path("/work/shared/data")):
        if candidate.is_dir():
            return candidate
    return _REPO.parent / "shared" / "data"


def bundle_mirror(bundle: Path) -> Path:
    """A `git clone --mirror` of a shared bundle, made once per machine and kept.

    Making one has git index the whole pack: 7.6 s of CPU for the eight real bundles, which
    two test files in every parallel worker read. So mirrors are kept in the user's cache,
    named by the bundle's content (a changed bundle gets a new one), made under a lock by the
    first worker to ask and moved into place whole. Tests only read them, or clone from them
    (a local clone shares their immutable objects).
    """
    digest = hashlib.sha256(bundle.read_bytes()).hexdigest()[:16]
    root = _cache_root() / "bundle-mirrors"
    root.mkdir(parents=True, exist_ok=True)
    target = root / f"{bundle.stem}-{digest}.git"
    if target.is_dir():
        return target
    with (root / f"{target.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.is_dir():
            partial = Path(tempfile.mkdtemp(dir=root, prefix=".partial-"))
            try:
                made = partial / "mirror.git"
                subprocess.run(
                    ["git", "clone", "--quiet", "--mirror", str(bundle), str(made)], check=True
                )
                made.rename(target)
            finally:
                shutil.rmtree(partial, ignore_errors=True)
    return target


def _cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "arena-tests"
