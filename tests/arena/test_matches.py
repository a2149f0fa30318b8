"""Real matches on the demo corpus, in Docker: the baselines rank as they must."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.ci import TaskCI
from arena.match import Arena, PreparedTask
from arena.players.baselines import NullPlayer, OraclePlayer, PartialPlayer
from arena.players.openai import OpenAIModel, OpenAIPlayer
from arena.protocol import Winner
from arena.tasks.demo import demo_tasks
from arena.tasks.schema import Task
from ci_runner import CIRunner, CISettings
from ci_runner.images import ImageBuilder
from ci_runner.workspace import Workspaces
from tests.arena.scripted_server import Reply, scripted_server

DEMO_IDS = sorted(t.instance_id for t in demo_tasks(Path("/tmp/arena-demo-ids")))
ARENA_BIN = str(Path(sys.executable).parent / "arena")


@pytest.fixture(scope="session")
def arena(runner: CIRunner, ci_settings: CISettings, images: dict[str, str]) -> Arena:
    ci = TaskCI(
        runner, ImageBuilder(runner.client, ci_settings), ci_settings.cache_dir / "ci-results"
    )
    workspaces = Workspaces(ci_settings.mirrors_dir, ci_settings.runs_dir)
    return Arena(ci, workspaces, ci_settings.cache_dir / "retrieval")


@pytest.fixture(scope="session")
def prepared(arena: Arena, ci_settings: CISettings) -> dict[str, PreparedTask]:
    cache: dict[str, PreparedTask] = {}
    tasks: dict[str, Task] = {
        t.instance_id: t for t in demo_tasks(ci_settings.cache_dir / "demo-repos")
    }

    class Lazy(dict[str, PreparedTask]):
        def __missing__(self, key: str) -> PreparedTask:
            cache[key] = arena.prepare(tasks[key])
            self[key] = cache[key]
            return cache[key]

    return Lazy()


@pytest.mark.parametrize("task_id", DEMO_IDS)
def test_oracle_beats_null(task_id: str, arena: Arena, prepared: dict[str, PreparedTask]) -> None:
    record = arena.play_match(prepared[task_id], OraclePlayer(), NullPlayer())
    assert record.result == "oracle" and record.score == {"oracle": 2, "null": 0}
    first, second = record.rounds
    assert first.patch_correct and not first.tests_valid and first.winner is Winner.SUBMITTER
    assert not second.patch_applies and second.tests_valid and second.winner is Winner.REVIEWER


@pytest.mark.parametrize("task_id", DEMO_IDS)
def test_oracle_beats_partial_and_its_tests_catch_the_partial_patch(
    task_id: str, arena: Arena, prepared: dict[str, PreparedTask]
) -> None:
    record = arena.play_match(prepared[task_id], OraclePlayer(), PartialPlayer())
    assert record.result == "oracle", [r.reasons for r in record.rounds]
    oracle_reviews = record.rounds[1]
    assert oracle_reviews.submitter == "partial"
    assert oracle_reviews.patch_applies and not oracle_reviews.patch_correct
    assert oracle_reviews.tests_valid and oracle_reviews.tests_catch
    assert oracle_reviews.winner is Winner.REVIEWER
    assert set(oracle_reviews.runs) == {
        "tests_on_base",
        "tests_on_gold",
        "patch_with_gold_tests",
        "tests_on_patch",
    }


def test_a_model_that_keeps_failing_loses_but_the_match_finishes(
    arena: Arena, prepared: dict[str, PreparedTask]
) -> None:
    with scripted_server([], default=Reply(status=503, body="{}")) as server:
        spec = OpenAIModel(
            name="flaky", base_url=server.url, model="m", max_retries=1, backoff_s=0.01
        )
        record = arena.play_match(
            prepared["demo__py-textkit-slug"], OpenAIPlayer(spec, None), OraclePlayer()
        )
    assert record.result == "oracle"
    flaky_submits, flaky_reviews = record.rounds
    assert (
        flaky_submits.patch.error is not None
        and "gave up after 2 attempts" in flaky_submits.patch.error
    )
    assert not flaky_submits.patch_applies and "HTTP 503" in flaky_submits.reasons["patch_applies"]
    assert flaky_reviews.tests.error is not None and not flaky_reviews.tests_valid


def test_a_model_answering_real_edits_is_judged_like_any_other(
    arena: Arena, prepared: dict[str, PreparedTask]
) -> None:
    """SEARCH/REPLACE answers from an endpoint become diffs that the CI runs."""
    fix = (
        "textkit/slug.py\n<<<<<<< SEARCH\n"
        '_UNSAFE = re.compile(r"[^a-z0-9]")\n=======\n_UNSAFE = re.compile(r"[^a-z0-9]+")\n>>>>>>> REPLACE\n'
    )
    with scripted_server([Reply(content=fix), Reply(content="no tests from me")]) as server:
        spec = OpenAIModel(name="llm", base_url=server.url, model="m", max_retries=0)
        record = arena.play_match(
            prepared["demo__py-textkit-slug"], OpenAIPlayer(spec, None), NullPlayer()
        )
    submits = record.rounds[0]
    assert submits.patch.diff is not None and submits.patch_applies and not submits.patch_correct
    assert submits.winner is Winner.DRAW  # half a fix, and no tests against it
    assert record.rounds[1].tests.parse_error is not None


def _arena(args: list[str], settings: CISettings) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ARENA_CACHE_DIR": str(settings.cache_dir), "COLUMNS": "200"}
    return subprocess.run(
        [ARENA_BIN, *args], capture_output=True, text=True, env=env, timeout=1800, check=False
    )


def test_play_prints_the_documented_json(ci_settings: CISettings, images: dict[str, str]) -> None:
    done = _arena(
        ["play", "--task", "demo__go-lru-recency", "--a", "partial", "--b", "oracle", "--json"],
        ci_settings,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["result"] == "oracle" and result["score"] == {"partial": 0, "oracle": 2}
    keys = {
        "submitter",
        "reviewer",
        "patch_applies",
        "patch_correct",
        "tests_valid",
        "tests_catch",
        "winner",
    }
    assert all(keys <= set(r) for r in result["rounds"])
    assert [r["submitter"] for r in result["rounds"]] == ["partial", "oracle"]


def test_play_refuses_unknown_models_and_tasks(ci_settings: CISettings) -> None:
    done = _arena(
        ["play", "--task", "demo__go-lru-recency", "--a", "gpt-9", "--b", "oracle"], ci_settings
    )
    assert done.returncode == 2 and "unknown model 'gpt-9'" in done.stderr
    done = _arena(["play", "--task", "nope", "--a", "null", "--b", "oracle"], ci_settings)
    assert done.returncode == 2 and "no task 'nope'" in done.stderr


def test_tournament_plays_every_pair_on_every_task(
    ci_settings: CISettings, images: dict[str, str], tmp_path: Path
) -> None:
    results = tmp_path / "results.jsonl"
    done = _arena(
        [
            "tournament",
            "--tasks",
            "demo",
            "--models",
            "oracle,partial,null",
            "--results",
            str(results),
            "--json",
        ],
        ci_settings,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["matches"] == 3 * len(DEMO_IDS) and summary["skipped"] == []
    ranking = [row["model"] for row in summary["standings"]]
    assert ranking[0] == "oracle"
    oracle = summary["standings"][0]
    assert oracle["wins"] == 2 * len(DEMO_IDS) and oracle["losses"] == 0
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(lines) == 3 * len(DEMO_IDS) and {"task", "a", "b", "winner", "language"} <= set(
        lines[0]
    )
