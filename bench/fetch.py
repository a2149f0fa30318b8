"""Fetching a task's repo: the whole repository (every branch and tag, as Arena did before
fetching by commit) against the task's commit by id (`Workspaces.mirror`, depth
`ARENA_FETCH_DEPTH`, 1 by default). Prints the time and the mirror's disk of each, and their
ratios, for each repository given.

    python bench/fetch.py [--repo PATH_OR_URL --commit SHA]...

Without `--repo`, the bundles in shared/data/swingarena-real (each at its instance's commit)
are measured. A repository fetched by hand (the tool library's `fetch`) is given as its git
directory; never a test's input.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the test data's locator, uninstalled
from ci_runner.workspace import Workspaces, remove_tree  # noqa: E402
from tests.shared_data import shared_data  # noqa: E402

REAL = shared_data() / "swingarena-real"


def _disk(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _whole(source: str, into: Path) -> bool:
    """Every branch and tag; False when the source cannot give them all (a mirror missing
    objects anywhere in its history), which is what made such lines unreachable before."""
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", "init", "-q", "--bare", str(into)], check=True, env=env)
    done = subprocess.run(
        ["git", "-C", str(into), "fetch", "-q", source,
         "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"],
        capture_output=True, env=env, check=False,
    )  # fmt: skip
    return done.returncode == 0


def measure(source: str, commit: str, depth: int) -> dict[str, float]:
    """Seconds and MB of both ways; the whole fetch's are what it took until it failed
    (`whole_failed` 1) when the source cannot give every branch and tag."""
    with tempfile.TemporaryDirectory(prefix="arena-bench-fetch-") as tmp:
        root = Path(tmp)
        started = time.monotonic()
        whole_ok = _whole(source, root / "whole.git")
        whole_s = time.monotonic() - started
        whole_bytes = _disk(root / "whole.git")
        remove_tree(root / "whole.git")
        workspaces = Workspaces(root / "mirrors", root / "runs", fetch_depth=depth)
        started = time.monotonic()
        workspaces.mirror(source, commit)
        by_id_s = time.monotonic() - started
        by_id_bytes = _disk(root / "mirrors")
    return {
        "whole_failed": 0.0 if whole_ok else 1.0,
        "whole_s": round(whole_s, 2),
        "whole_mb": round(whole_bytes / 2**20, 1),
        "by_commit_s": round(by_id_s, 2),
        "by_commit_mb": round(by_id_bytes / 2**20, 1),
        "time_ratio": round(by_id_s / whole_s, 3) if whole_s else 0.0,
        "disk_ratio": round(by_id_bytes / whole_bytes, 3) if whole_bytes else 0.0,
    }


def _bundled() -> list[tuple[str, str]]:
    found = []
    for path in sorted(REAL.glob("*_filtered_instance_list.jsonl")):
        for raw in path.read_text().splitlines():
            record = json.loads(raw)
            bundle = REAL / f"{record['repo'].replace('/', '+')}.bundle"
            if bundle.exists():
                found.append((str(bundle), record["base_commit"]))
    return found


def _label(source: str) -> str:
    """The repository's name: a fetched snapshot's git dir is `.../OWNER+NAME/repo`."""
    parts = Path(source).parts
    return parts[-2] if parts[-1] == "repo" and len(parts) > 1 else parts[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", action="append", default=[])
    parser.add_argument("--commit", action="append", default=[])
    parser.add_argument("--depth", type=int, default=1)
    args = parser.parse_args()
    if len(args.repo) != len(args.commit):
        parser.error("give one --commit per --repo")
    pairs = list(zip(args.repo, args.commit, strict=True)) or _bundled()
    print(f"{'repository':60} {'whole':>16} {'by commit':>16} {'time':>7} {'disk':>7}")
    for source, commit in pairs:
        m = measure(source, commit, args.depth)
        print(
            f"{_label(source)[:60]:60} {m['whole_s']:7.1f}s {m['whole_mb']:6.1f}MB "
            f"{m['by_commit_s']:7.1f}s {m['by_commit_mb']:6.1f}MB "
            f"{m['time_ratio']:6.3f}x {m['disk_ratio']:6.3f}x"
            + ("  (the whole fetch failed: the source lacks objects)" if m["whole_failed"] else "")
        )


if __name__ == "__main__":
    main()
