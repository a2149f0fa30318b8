"""The `ci_runs` table keeps what TaskCI's rule keeps: a finished run once, for every worker;
never a timeout, never an infrastructure fault."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.ci import TaskCI
from arena.store.ci_runs import StoredResults
from arena.store.pool import open_pool
from ci_runner import CISettings, CIStatus
from ci_runner.sandbox import SandboxLost
from tests.arena.test_ci_cache import LOST, PASSED, TIMEOUT, FixedImages, ScriptedRunner, tiny_task


def test_a_finished_run_is_kept_and_a_timeout_or_an_infrastructure_fault_never(
    database_url: str, tmp_path: Path
) -> None:
    pool = open_pool(database_url, max_size=2)
    settings = CISettings(cache_dir=tmp_path / "cache")
    try:
        runner = ScriptedRunner(settings, [LOST, TIMEOUT, TIMEOUT, PASSED])
        stored = TaskCI(runner, FixedImages(runner.provider, settings), StoredResults(pool))
        with pytest.raises(SandboxLost):
            stored.run(tiny_task(), ())
        assert stored.run(tiny_task(), ()).status is CIStatus.TIMEOUT  # re-run once
        assert stored.run(tiny_task(), ()).status is CIStatus.PASSED
        again = TaskCI(
            ScriptedRunner(settings, []),
            FixedImages(runner.provider, settings),
            StoredResults(pool),
        )
        assert again.run(tiny_task(), ()).status is CIStatus.PASSED  # another worker: kept
        assert runner.runs == 4
        with pool.connection() as conn:
            rows = conn.execute("SELECT status FROM ci_runs").fetchall()
        assert [r["status"] for r in rows] == ["passed"]
    finally:
        pool.close()
