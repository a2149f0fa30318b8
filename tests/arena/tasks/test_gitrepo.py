"""Demo repos committed by many processes at once: every one gets the same commit."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from arena.tasks.demo import DEMO_DIR
from arena.tasks.gitrepo import commit_directory


def test_processes_committing_the_same_repo_at_once_all_get_its_commit(tmp_path: Path) -> None:
    """The API and every worker commit the demo repos at start; two creating one repo at
    once failed on git's own lock file, which ended a worker before it served a match."""
    source = DEMO_DIR / "py-ledger-split" / "repo"
    target = tmp_path / "demo-repos" / "py-ledger-split.git"
    with ProcessPoolExecutor(max_workers=8) as pool:
        commits = list(pool.map(commit_directory, [source] * 16, [target] * 16))
    assert len(set(commits)) == 1, commits
