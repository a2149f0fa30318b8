"""Real matches on the demo corpus, in Docker: the baselines rank as they must."""

from __future__ import annotations

import json
import socket
import subprocess
import tomllib
from pathlib import Path

import pytest

from arena.ci import TaskCI
from arena.languages import Language
from arena.match import Arena, MatchFailed, PreparedTask, RoundRecord
from arena.players.base import Player, Role
from arena.players.baselines import NullPlayer, OraclePlayer, PartialPlayer
from arena.players.openai import OpenAIModel, OpenAIPlayer
from arena.players.registry import stored_spec
from arena.protocol import RULES_VERSION, Winner
from arena.store.matches import load_match, store_answer, store_round
from arena.store.pool import open_pool
from arena.store.tournaments import create_tournament, unfinished_matches
from arena.tasks.demo import demo_sources, demo_tasks
from arena.tasks.schema import Task
from ci_runner import CIRunner, CISettings
from ci_runner.images import ImageBuilder
from ci_runner.workspace import Workspaces
from tests.arena.scripted_server import Reply, scripted_server
from tests.command import run_arena

# read from each task.toml: collection commits no repo (in parallel runs, nor to a shared path)
DEMO_IDS = sorted(
    tomllib.loads((s.directory / "task.toml").read_text())["instance_id"] for s in demo_sources()
)


@pytest.fixture(scope="session")
def arena(runner: CIRunner, ci_settings: CISettings, images: dict[str, str]) -> Arena:
    ci = TaskCI(
        runner, ImageBuilder(runner.provider, ci_settings), ci_settings.cache_dir / "ci-results"
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
        "patch_with_gold_tests",  # not correct: no second run
        "tests_on_patch",  # and the catch confirmed: again, gold side again, neutral change
        "tests_on_patch_again",
        "tests_on_gold_again",
        "tests_on_neutral_patch",
    }
    # the oracle's tests are the gold tests: its catch runs the partial patch's tree anew,
    # never reusing the run that judged the patch (nor validation's) as its own
    runs = oracle_reviews.runs
    assert runs["tests_on_patch"].duration_s != runs["patch_with_gold_tests"].duration_s
    assert runs["tests_on_patch_again"].duration_s != runs["tests_on_patch"].duration_s
    oracle_submits = record.rounds[0]
    assert oracle_submits.patch_correct, oracle_submits.reasons
    assert "on two independent runs" in oracle_submits.reasons["patch_correct"]
    first, second = (
        oracle_submits.runs[k] for k in ("patch_with_gold_tests", "patch_with_gold_tests_again")
    )
    assert first.duration_s != second.duration_s  # two runs, not one run read twice


def test_the_services_rounds_are_judged_as_the_command_lines(
    arena: Arena,
    prepared: dict[str, PreparedTask],
    database_url: str,
) -> None:
    """Same answers, same record: the workers ask in one step, store the answer, and judge the
    stored answers in another (`Arena.judge_round`); the command line asks and judges at once
    (`Arena.play_round`). Every pairing of the baselines, both roles, through PostgreSQL."""
    task = prepared["demo__py-textkit-slug"]
    players: dict[str, Player] = {
        p.name: p for p in (OraclePlayer(), PartialPlayer(), NullPlayer())
    }
    pool = open_pool(database_url, max_size=2)
    try:
        models = {name: stored_spec(name, None) for name in players}
        tournament_id = create_tournament(pool, models, [task.task], "demo")
        match_ids = unfinished_matches(pool, tournament_id)
        assert len(match_ids) == 3
        records: list[RoundRecord] = []
        for match_id in match_ids:
            for played in load_match(pool, match_id).rounds:
                submitter, reviewer = players[played.submitter], players[played.reviewer]
                # the `answer` steps: the reviewer is shown the patch as stored
                patch = submitter.propose_patch(task.contexts[Role.SUBMITTER])
                store_answer(pool, match_id, played.idx, Role.SUBMITTER, submitter.name, patch)
                stored_patch = load_match(pool, match_id).rounds[played.idx].answers
                tests = reviewer.propose_tests(
                    task.contexts[Role.REVIEWER], stored_patch[Role.SUBMITTER].diff
                )
                store_answer(pool, match_id, played.idx, Role.REVIEWER, reviewer.name, tests)
                # the `round` step, on the answers as the store gives them back
                answers = load_match(pool, match_id).rounds[played.idx].answers
                judged = arena.judge_round(
                    task,
                    played.submitter,
                    answers[Role.SUBMITTER],
                    played.reviewer,
                    answers[Role.REVIEWER],
                )
                store_round(pool, match_id, played.idx, judged)
                kept = load_match(pool, match_id).rounds[played.idx].record
                in_one_process = arena.play_round(task, submitter, reviewer)
                assert kept == judged == in_one_process
                records.append(in_one_process)
    finally:
        pool.close()
    # every branch of the judge was taken: a catch confirmed, and a missing patch and tests
    assert any(r.tests_catch and "tests_on_neutral_patch" in r.runs for r in records)
    assert any(r.patch.failure for r in records) and any(r.tests.failure for r in records)


def test_an_endpoint_that_stays_down_fails_the_match_instead_of_losing_it(
    arena: Arena, prepared: dict[str, PreparedTask]
) -> None:
    with scripted_server([], default=Reply(status=503, body="{}")) as server:
        spec = OpenAIModel(
            name="flaky", base_url=server.url, model="m", max_retries=1, backoff_s=0.01
        )
        with pytest.raises(MatchFailed) as failed:
            arena.play_match(
                prepared["demo__py-textkit-slug"], OpenAIPlayer(spec, None), OraclePlayer()
            )
    assert failed.value.at_fault == "flaky"
    assert "3 attempts failed" in failed.value.reason and "HTTP 503" in failed.value.reason
    assert len(server.requests) == 3 * 2  # the round three times, each call tried twice


def test_an_answer_cut_off_at_the_token_limit_loses_its_round(
    arena: Arena, prepared: dict[str, PreparedTask]
) -> None:
    task = prepared["demo__py-textkit-slug"].task
    with scripted_server(
        [
            Reply(content=task.patch, finish_reason="length"),
            Reply(content=task.test_patch, finish_reason="length"),
        ]
    ) as server:
        spec = OpenAIModel(name="long", base_url=server.url, model="m", max_retries=0)
        record = arena.play_match(
            prepared["demo__py-textkit-slug"], OpenAIPlayer(spec, None), OraclePlayer()
        )
    submits, reviews = record.rounds
    assert (
        not submits.patch_applies
        and "cut off at the token limit" in submits.reasons["patch_applies"]
    )
    assert submits.winner is Winner.REVIEWER and reviews.winner is Winner.SUBMITTER
    assert record.result == "oracle"


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
    return run_arena(args, ARENA_CACHE_DIR=str(settings.cache_dir))


def test_play_prints_the_documented_json(
    ci_settings: CISettings, images: dict[str, str], no_containers_left: None
) -> None:
    """Run in this process, the command leaves no sandbox up: its spares go when it ends."""
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
    assert [r["winner"] for r in result["rounds"]] == ["reviewer", "submitter"]
    assert [r["winner_model"] for r in result["rounds"]] == ["oracle", "oracle"]
    assert result["language"] == "go" and result["kind"] == "gold-judged"
    # the rules it was judged under, with the match and each round
    assert result["rules_version"] == RULES_VERSION
    assert {r["rules_version"] for r in result["rounds"]} == {RULES_VERSION}
    # a Go task's runs of a patch carry a tripwire that must fail: guarded
    assert result["unguarded"] is False and {r["guarded"] for r in result["rounds"]} == {True}


@pytest.mark.docker  # its CLI run asks the engine
def test_play_refuses_unknown_models_and_tasks(ci_settings: CISettings) -> None:
    done = _arena(
        ["play", "--task", "demo__go-lru-recency", "--a", "gpt-9", "--b", "oracle"], ci_settings
    )
    assert done.returncode == 2 and "unknown model 'gpt-9'" in done.stderr
    done = _arena(["play", "--task", "nope", "--a", "null", "--b", "oracle"], ci_settings)
    assert done.returncode == 2 and "no task 'nope'" in done.stderr


def test_tournament_plays_every_pair_on_every_task(
    ci_settings: CISettings, images: dict[str, str], tmp_path: Path, no_containers_left: None
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
    assert len(lines) == 3 * len(DEMO_IDS)
    played = _arena(
        ["play", "--task", "demo__go-lru-recency", "--a", "partial", "--b", "oracle", "--json"],
        ci_settings,
    )
    same = json.loads(played.stdout)
    assert all(set(line) == set(same) for line in lines)  # one schema for both
    assert all(set(r) == set(same["rounds"][0]) for line in lines for r in line["rounds"])
    assert {line["kind"] for line in lines} == {"gold-judged"}
    assert {line["language"] for line in lines} == {language.value for language in Language}
    rated = _arena(["ratings", "--results", str(results), "--bootstrap", "50"], ci_settings)
    assert rated.returncode == 0, rated.stderr
    assert "role ratings" in rated.stdout and "rates per model and language" in rated.stdout
    for model in ("oracle", "partial", "null"):
        assert model in rated.stdout


def test_adaptive_tournament_plays_within_its_budget_and_reports_its_criterion(
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
            "--mode",
            "adaptive",
            "--target-width",
            "50",
            "--max-matches",
            "4",
            "--jobs",
            "2",
            "--results",
            str(results),
            "--json",
        ],
        ci_settings,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["mode"] == "adaptive" and summary["stop"] == "budget"
    assert summary["matches"] == 4 and summary["budget_left"] == {"matches": 0}
    assert summary["widest_open_interval"] > 50 and summary["target_width"] == 50
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    assert len({(x["task"], *sorted((x["a"], x["b"]))) for x in lines}) == 4


def test_a_dead_endpoint_fails_its_matches_loudly_and_the_tournament_goes_on(
    ci_settings: CISettings, images: dict[str, str], tmp_path: Path
) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    models = tmp_path / "models.yaml"
    models.write_text(
        f"models:\n  - name: dead\n    base_url: http://127.0.0.1:{port}/v1\n    model: m\n"
    )
    tasks = tmp_path / "tasks.jsonl"
    chosen = [
        t
        for t in demo_tasks(ci_settings.cache_dir / "demo-repos")
        if t.instance_id == "demo__py-textkit-slug"
    ]
    tasks.write_text("".join(t.model_dump_json() + "\n" for t in chosen))
    results = tmp_path / "results.jsonl"
    done = _arena(
        [
            "tournament",
            "--tasks",
            str(tasks),
            "--models",
            "oracle,null,dead",
            "--models-file",
            str(models),
            "--results",
            str(results),
            "--json",
        ],
        ci_settings,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["matches"] == 1 and len(summary["failed"]) == 2
    assert {f["at_fault"] for f in summary["failed"]} == {"dead"}
    assert "model dead's endpoint is at fault in 2 match(es)" in done.stderr
    dead = next(row for row in summary["standings"] if row["model"] == "dead")
    assert (dead["wins"], dead["losses"], dead["ties"], dead["failed"]) == (0, 0, 0, 2)
    rated = _arena(["ratings", "--results", str(results), "--bootstrap", "20"], ci_settings)
    assert rated.returncode == 0, rated.stderr
    assert "2 failed match(es)" in rated.stderr and "dead" not in rated.stdout
