"""The gold answers are not public: a task's gold patch and tests only with the admin token; a
match's page shows them (and the answers' text and diffs and the CI logs, which carry them: the
oracle answers the gold patch) only once the match has finished, never while it is queued or
running, and then to the admin only, since the task can be played again (unless the operator
publishes them). No other read (task list, corpus report, match list, results export) carries
them.
Real PostgreSQL; matches are moved through their states with the workers' own store calls."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from api.core.config import ApiSettings
from api.main import create_app
from arena.match import RoundRecord
from arena.players.base import Answer, Role
from arena.protocol import Winner
from arena.store.matches import end_match, mark_running, store_answer, store_round
from arena.store.models import list_models
from arena.store.pool import Pool, open_pool
from arena.store.tasks import upsert_tasks
from arena.store.tournaments import cancel_tournament, create_tournament
from arena.tasks.schema import Task
from arena.vocabulary import MatchStatus
from ci_runner import CISettings
from ci_runner.pipeline import Pipeline, ReportFormat, ReportSpec, Step
from ci_runner.types import CIResult, CIStatus, StepResult
from tests.api.conftest import ADMIN

FIX = "GOLD-FIX-7f3a"  # in the gold patch only
CHECK = "GOLD-TEST-91c2"  # in the gold tests only
PATCH = f"diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-old\n+{FIX}\n"
TEST_PATCH = f"diff --git a/t.py b/t.py\n--- a/t.py\n+++ b/t.py\n@@ -1 +1 @@\n-old\n+{CHECK}\n"
SECRETS = (FIX, CHECK)


def _task(instance_id: str) -> Task:
    return Task(
        instance_id=instance_id,
        repo="/nonexistent/repo",
        base_commit="0123456789abcdef" * 2 + "01234567",
        language="python",
        problem_statement="x() returns old",
        patch=PATCH,
        test_patch=TEST_PATCH,
        pipeline=Pipeline(
            steps=(Step(name="test", run="pytest --junitxml=report.xml"),),
            report=ReportSpec(format=ReportFormat.JUNIT, path="report.xml"),
        ),
    )


def _leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


@pytest.fixture
def pool(api_settings: ApiSettings, client: TestClient) -> Iterator[Pool]:
    opened = open_pool(api_settings.database_url)
    try:
        yield opened
    finally:
        opened.close()


def test_a_task_s_gold_patch_and_tests_are_served_with_the_admin_token_only(
    client: TestClient, pool: Pool
) -> None:
    upsert_tasks(pool, [_task("py-gold-1")])

    anonymous = client.get("/api/tasks/py-gold-1")
    assert anonymous.status_code == 200
    shown = anonymous.json()
    assert (shown["patch"], shown["test_patch"], shown["gold_access"]) == (
        None,
        None,
        "admin_only",
    )
    assert shown["problem_statement"] == "x() returns old" and not _leaks(anonymous.text)

    admin = client.get("/api/tasks/py-gold-1", headers=ADMIN).json()
    assert (admin["patch"], admin["test_patch"], admin["gold_access"]) == (
        PATCH,
        TEST_PATCH,
        "shown",
    )
    wrong = client.get("/api/tasks/py-gold-1", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and not _leaks(wrong.text)

    for path in ("/api/tasks", "/api/tasks/report", "/api/tasks/report?format=csv"):
        listed = client.get(path)
        assert listed.status_code == 200 and not _leaks(listed.text), path


def test_a_local_demo_without_a_token_shows_the_gold_as_it_takes_anyone_s_writes(
    api_settings: ApiSettings, ci_settings: CISettings, pool: Pool
) -> None:
    upsert_tasks(pool, [_task("py-gold-demo")])
    demo = api_settings.model_copy(update={"demo": True, "admin_token": None})
    with TestClient(create_app(demo, ci_settings)) as open_client:
        assert open_client.get("/api/tasks/py-gold-demo").json()["patch"] == PATCH
    with_token = api_settings.model_copy(update={"demo": True, "admin_token": SecretStr("t")})
    with TestClient(create_app(with_token, ci_settings)) as guarded:
        assert guarded.get("/api/tasks/py-gold-demo").json()["patch"] is None


def _round(sub: str, rev: str, patch: Answer, tests: Answer) -> RoundRecord:
    """The oracle's round as the judge records it: the runs' logs echo the gold code."""
    log = f"x.py:1: {FIX}\nt.py:1: {CHECK}\nFAILED t.py::test_x\n"
    run = CIResult(
        status=CIStatus.FAILED,
        steps=(StepResult(name="test", exit_code=1, duration_s=1.5, log=log),),
        tests={"t.py::test_x": "failed"},
    )
    return RoundRecord(
        submitter=sub, reviewer=rev, patch=patch, tests=tests,
        runs={"patch_with_gold_tests": run, "tests_on_gold": run},
        patch_applies=True, patch_correct=True, tests_valid=True, tests_catch=False,
        reasons={"patch_correct": "every FAIL_TO_PASS test passes"}, winner=Winner.SUBMITTER,
    )  # fmt: skip


def _matches(pool: Pool, instance_id: str, a: str, b: str) -> tuple[int, int]:
    specs = {r.name: r.spec for r in list_models(pool, False)}
    tournament = create_tournament(pool, {m: specs[m] for m in (a, b)}, [_task(instance_id)], "t")
    with pool.connection() as conn:
        row = conn.execute("SELECT id FROM matches WHERE tournament_id = %s", (tournament,))
        found = row.fetchone()
    assert found is not None
    return tournament, int(found["id"])


def test_a_match_shows_the_gold_and_what_carries_it_only_once_it_has_finished(
    client: TestClient, pool: Pool
) -> None:
    tournament, match = _matches(pool, "py-gold-2", "oracle", "null")

    def evidence() -> dict[str, object]:
        shown = client.get(f"/api/matches/{match}")
        assert shown.status_code == 200
        for path in (
            f"/api/matches?tournament={tournament}",
            f"/api/results.jsonl?tournament={tournament}",
            f"/api/tournaments/{tournament}",
        ):
            assert not _leaks(client.get(path).text), path
        found: dict[str, object] = shown.json()
        return found

    queued = evidence()
    assert queued["status"] == "queued" and not _leaks(json.dumps(queued))
    detail = queued["task_detail"]
    assert isinstance(detail, dict)
    assert (detail["patch"], detail["test_patch"], detail["gold_access"]) == (
        None,
        None,
        "after_match",
    )
    assert "Until the match has finished" in str(queued["withheld"])

    # round 1 played while the match runs: the oracle answered the gold patch and tests
    mark_running(pool, match)
    oracle = Answer(raw_text=PATCH, diff=PATCH, latency_s=0.1)
    oracle_tests = Answer(raw_text=TEST_PATCH, diff=TEST_PATCH, latency_s=0.1)
    nothing = Answer(parse_error="the answer is empty")
    store_answer(pool, match, 0, Role.SUBMITTER, "oracle", oracle)
    store_answer(pool, match, 0, Role.REVIEWER, "null", nothing)
    store_round(pool, match, 0, _round("oracle", "null", oracle, nothing))
    store_answer(pool, match, 1, Role.REVIEWER, "oracle", oracle_tests)  # round 2 under way

    running = evidence()
    assert running["status"] == "running"
    assert not _leaks(json.dumps(running)), _leaks(json.dumps(running))
    rounds = running["rounds"]
    assert isinstance(rounds, list)
    first, second = rounds
    assert first["judged"] and first["winner"] == "oracle" and first["facts"]["patch_correct"]
    assert [(a["model"], a["raw_text"], a["diff"]) for a in first["answers"]] == [
        ("oracle", None, None),
        ("null", None, None),
    ]
    assert first["answers"][1]["parse_error"] == "the answer is empty"  # why, not what
    run = first["runs"]["patch_with_gold_tests"]
    assert run["status"] == "failed" and run["tests"] == {"t.py::test_x": "failed"}
    assert [(s["name"], s["exit_code"], s["log"]) for s in run["steps"]] == [("test", 1, "")]
    assert second["answers"][0]["raw_text"] is None
    assert running["task_detail"]["gold_access"] == "after_match"  # type: ignore[index]

    store_answer(pool, match, 1, Role.SUBMITTER, "null", nothing)
    store_round(pool, match, 1, _round("null", "oracle", nothing, oracle_tests))
    assert end_match(pool, match, MatchStatus.DONE, score={"oracle": 2, "null": 0}, result="oracle")

    # finished, but its task can be played again: the gold stays the admin's
    anonymous = evidence()
    assert not _leaks(json.dumps(anonymous)), _leaks(json.dumps(anonymous))
    assert anonymous["task_detail"]["gold_access"] == "admin_only"  # type: ignore[index]
    assert "can be played again" in str(anonymous["withheld"])

    shown = client.get(f"/api/matches/{match}", headers=ADMIN)
    assert shown.status_code == 200
    done = shown.json()
    detail = done["task_detail"]
    assert isinstance(detail, dict)
    assert (detail["patch"], detail["test_patch"], detail["gold_access"]) == (
        PATCH,
        TEST_PATCH,
        "shown",
    )
    assert done["withheld"] is None
    rounds = done["rounds"]
    assert isinstance(rounds, list)
    assert rounds[0]["answers"][0]["diff"] == PATCH
    assert FIX in rounds[0]["runs"]["patch_with_gold_tests"]["steps"][0]["log"]


@pytest.mark.parametrize("ending", [MatchStatus.FAILED, MatchStatus.SKIPPED])
def test_a_failed_or_skipped_match_has_finished_and_shows_the_gold(
    client: TestClient, pool: Pool, ending: MatchStatus
) -> None:
    _, match = _matches(pool, f"py-gold-{ending}", "oracle", "null")
    mark_running(pool, match)
    assert end_match(pool, match, ending, reason="the task is invalid")
    detail = client.get(f"/api/matches/{match}", headers=ADMIN).json()["task_detail"]
    assert (detail["patch"], detail["gold_access"]) == (PATCH, "shown")


def test_a_corpus_no_tournament_plays_again_may_publish_finished_matches_gold(
    api_settings: ApiSettings, ci_settings: CISettings, pool: Pool
) -> None:
    _, match = _matches(pool, "py-gold-public", "oracle", "null")
    mark_running(pool, match)
    assert end_match(pool, match, MatchStatus.DONE, score={"oracle": 0, "null": 0}, result="tie")
    public = api_settings.model_copy(update={"match_gold_public": True})
    with TestClient(create_app(public, ci_settings)) as anyone:
        detail = anyone.get(f"/api/matches/{match}").json()["task_detail"]
    assert (detail["patch"], detail["gold_access"]) == (PATCH, "shown")


def test_a_cancelled_match_never_finished_and_keeps_the_gold_for_the_admin(
    client: TestClient, pool: Pool
) -> None:
    tournament, match = _matches(pool, "py-gold-cancelled", "oracle", "null")
    mark_running(pool, match)
    oracle = Answer(raw_text=PATCH, diff=PATCH)
    store_answer(pool, match, 0, Role.SUBMITTER, "oracle", oracle)
    cancel_tournament(pool, tournament)
    shown = client.get(f"/api/matches/{match}")
    body = shown.json()
    assert body["status"] == "cancelled" and not _leaks(shown.text)
    assert body["task_detail"]["gold_access"] == "admin_only"
    assert "cancelled before it finished" in body["withheld"]
