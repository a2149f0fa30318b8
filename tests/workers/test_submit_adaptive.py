"""`arena submit --mode adaptive` records the tournament as the API does: its goal, its
budgets (CI hours in seconds) and its task pool, no match yet: the workers choose them."""

from __future__ import annotations

from pathlib import Path

import psycopg

from ci_runner import CISettings
from tests.command import run_arena
from tests.workers.conftest import tasks_file


def test_submit_records_an_adaptive_tournament_and_refuses_budgets_without_it(
    service_env: dict[str, str], ci_settings: CISettings, tmp_path: Path
) -> None:
    spec = str(tasks_file(tmp_path / "tasks.jsonl", ci_settings.cache_dir,
                          ["demo__py-textkit-slug", "demo__go-lru-recency"]))  # fmt: skip
    assert run_arena(["db", "migrate"], service_env).returncode == 0
    refused = run_arena(["submit", "--tasks", spec, "--models", "oracle,null", "--max-matches", "3"],
                    service_env)  # fmt: skip
    assert refused.returncode == 2
    assert "--target-width and the --max-* budgets need --mode adaptive" in refused.stderr
    submitted = run_arena(
        ["submit", "--tasks", spec, "--models", "oracle,null,partial", "--mode", "adaptive",
         "--target-width", "80", "--max-matches", "5", "--max-ci-hours", "0.5",
         "--max-model-tokens", "9000", "--in-flight", "2"],
        service_env,
    )  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr
    tournament = int(submitted.stdout.split()[-1])
    with psycopg.connect(service_env["ARENA_DATABASE_URL"]) as conn:
        mode, adaptive, pool = conn.execute(
            "SELECT mode, adaptive, cardinality(task_ids) FROM tournaments WHERE id = %s",
            (tournament,),
        ).fetchone() or (None, None, None)
        matches = conn.execute(
            "SELECT count(*) FROM matches WHERE tournament_id = %s", (tournament,)
        ).fetchone()
    assert mode == "adaptive" and pool == 2 and matches == (0,)
    assert adaptive == {
        "goal": {"target_width": 80.0, "separate": True},
        "budget": {"matches": 5, "seconds": 1800.0, "per_model_tokens": 9000},
        "in_flight": 2,
    }
