"""Leaderboards with combined filters, role ratings, round-fact rates, metadata and the
knowledge-cutoff window, fitted by the workers' own functions over matches stored in PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from fastapi.testclient import TestClient

from api.core.config import ApiSettings
from arena.match import RoundRecord
from arena.players.base import Answer, Role
from arena.protocol import Winner
from arena.store.matches import end_match, mark_running, store_answer, store_round
from arena.store.models import list_models
from arena.store.pool import Pool, open_pool
from arena.store.tournaments import create_tournament
from arena.tasks.schema import Task
from ci_runner.pipeline import Pipeline, ReportFormat, ReportSpec, Step
from tests.api.conftest import ADMIN
from workers.ratings import refresh_boards, refresh_window


@dataclass(frozen=True)
class Played:
    """One round as the protocol decided it: its facts and its winner."""

    applies: bool
    correct: bool
    valid: bool
    catch: bool

    def winner(self) -> Winner:
        if self.valid and (self.catch or not self.applies):
            return Winner.REVIEWER
        if self.applies and self.correct:
            return Winner.SUBMITTER
        return Winner.DRAW


CORRECT = Played(applies=True, correct=True, valid=False, catch=False)  # submitter wins
CAUGHT = Played(applies=True, correct=False, valid=True, catch=True)  # reviewer wins
MISSED = Played(applies=True, correct=False, valid=True, catch=False)  # draw


PIPELINE = Pipeline(
    steps=(Step(name="test", run="pytest --junitxml=report.xml"),),
    report=ReportSpec(format=ReportFormat.JUNIT, path="report.xml"),
)


def _task(instance_id: str, language: str, created: str, gold_tests: bool) -> Task:
    return Task(
        instance_id=instance_id,
        repo="/nonexistent/repo",
        base_commit="0123456789abcdef" * 2 + "01234567",
        language=language,
        created_at=created,
        problem_statement="a bug",
        patch="diff --git a/x b/x\n",
        test_patch="diff --git a/t b/t\n" if gold_tests else "",
        pipeline=PIPELINE,
    )


def _record(sub: str, rev: str, played: Played) -> RoundRecord:
    answer = Answer(raw_text="x", diff=None, latency_s=2.0, prompt_tokens=1000,
                    completion_tokens=500)  # fmt: skip
    return RoundRecord(
        submitter=sub, reviewer=rev, patch=answer, tests=answer, runs={},
        patch_applies=played.applies, patch_correct=played.correct, tests_valid=played.valid,
        tests_catch=played.catch, reasons={}, winner=played.winner(),
    )  # fmt: skip


def _play(pool: Pool, tournament: int, task: str, a: str, b: str, rounds: list[Played]) -> None:
    """The match a-vs-b on a task: round 1 a submits, round 2 b submits."""
    with pool.connection() as conn:
        row = conn.execute(
            "SELECT m.id FROM matches m JOIN tasks t ON t.id = m.task_id WHERE m.tournament_id"
            " = %s AND t.instance_id = %s AND m.a = %s AND m.b = %s",
            (tournament, task, a, b),
        ).fetchone()
    assert row is not None, (task, a, b)
    match_id = int(row["id"])
    mark_running(pool, match_id)
    wins = {a: 0, b: 0}
    for idx, (sub, rev) in enumerate(((a, b), (b, a))):
        record = _record(sub, rev, rounds[idx])
        store_answer(pool, match_id, idx, Role.SUBMITTER, sub, record.patch)
        store_answer(pool, match_id, idx, Role.REVIEWER, rev, record.tests)
        store_round(pool, match_id, idx, record)
        if record.winner_model is not None:
            wins[record.winner_model] += 1
    result = "tie" if wins[a] == wins[b] else max(wins, key=lambda m: wins[m])
    end_match(pool, match_id, "done", score=wins, result=result)


TASKS = [  # opened before and after the cutoff of m-old (2025-06-30) and m-new (2026-01-31)
    _task("py-early", "python", "2025-03-01T10:00:00Z", gold_tests=True),
    _task("py-mid", "python", "2025-09-15T10:00:00Z", gold_tests=True),
    _task("go-mid", "go", "2025-10-01T10:00:00Z", gold_tests=False),
    _task("go-late", "go", "2026-02-10T10:00:00Z", gold_tests=True),
]


@pytest.fixture
def seeded(client: TestClient, api_settings: ApiSettings) -> Iterator[tuple[Pool, int]]:
    for name, cutoff, org in (("m-old", "2025-06-30", "Old Labs"), ("m-new", "2026-01-31", None)):
        registered = client.post(
            "/api/models",
            headers=ADMIN,
            json={"name": name, "base_url": "http://127.0.0.1:9/v1", "model": name,
                  "knowledge_cutoff": cutoff, "organization": org, "license": "apache-2.0",
                  "price_input_per_mtok": 1.0, "price_output_per_mtok": 2.0},
        )  # fmt: skip
        assert registered.status_code == 201, registered.text
    pool = open_pool(api_settings.database_url)
    specs = {r["name"]: r["spec"] for r in list_models(pool, False)}
    specs = {m: specs[m] for m in ("m-old", "m-new", "oracle")}
    tournament = create_tournament(pool, specs, TASKS, "test")
    # m-old: a correct patch everywhere; m-new's patches are wrong, caught on python only
    for task, new_round in (
        ("py-early", CAUGHT), ("py-mid", CAUGHT), ("go-mid", MISSED), ("go-late", MISSED),
    ):  # fmt: skip
        _play(pool, tournament, task, "m-old", "m-new", [CORRECT, new_round])
    for task in ("py-mid", "go-late"):  # oracle against both: always correct, never caught
        _play(pool, tournament, task, "m-old", "oracle", [CORRECT, CORRECT])
        _play(pool, tournament, task, "m-new", "oracle", [MISSED, CORRECT])
    try:
        yield pool, tournament
    finally:
        pool.close()


def _rows(board: dict[str, object]) -> dict[str, dict[str, object]]:
    rows = board["rows"]
    assert isinstance(rows, list)
    return {r["model"]: r for r in rows}


def test_rows_carry_role_ratings_rates_and_metadata(
    client: TestClient, seeded: tuple[Pool, int]
) -> None:
    pool, _ = seeded
    before = client.get("/api/leaderboard").json()
    assert before["computed_at"] is None and before["rows"] == [] and before["current"]
    refresh_boards(pool, None, bootstrap=20)
    board = client.get("/api/leaderboard").json()
    assert board["match_count"] == 8 and board["current"] and board["window"] is None
    rows = _rows(board)
    old, new = rows["m-old"], rows["m-new"]
    assert (old["wins"], old["losses"], old["ties"]) == (4, 0, 2)
    assert old["organization"] == "Old Labs" and new["license"] == "apache-2.0"
    assert old["knowledge_cutoff"] == "2025-06-30"
    assert old["patch_correct"] == 1.0 and old["rounds_submitted"] == 6
    assert new["patch_correct"] == 0.0 and new["rounds_submitted"] == 6
    # m-old reviewed 4 wrong patches of m-new (2 caught) and 2 correct ones of oracle
    assert old["rounds_reviewed"] == 6 and old["tests_valid"] == pytest.approx(4 / 6)
    assert old["wrong_patches_reviewed"] == 4 and old["catch"] == 0.5
    assert rows["oracle"]["wrong_patches_reviewed"] == 2 and rows["oracle"]["catch"] == 0.0
    assert new["catch"] is None  # never faced a wrong patch
    assert old["submitter"] > new["submitter"]
    assert old["cost"] == pytest.approx(12 * (1000 * 1.0 + 500 * 2.0) / 1e6)  # 2 per match
    assert rows["oracle"]["cost"] is None and rows["oracle"]["latency"] == 2.0


def test_filters_combine_and_a_role_ranks_by_its_rating(
    client: TestClient, seeded: tuple[Pool, int]
) -> None:
    pool, tournament = seeded
    refresh_boards(pool, tournament, bootstrap=20)
    query = {"tournament": tournament, "language": "go", "kind": "gold-judged"}
    board = client.get("/api/leaderboard", params=query).json()
    assert board["match_count"] == 3 and (board["language"], board["kind"]) == ("go", "gold-judged")
    assert set(_rows(board)) == {"m-old", "m-new", "oracle"}  # go-late only
    assert (_rows(board)["m-old"]["wins"], _rows(board)["m-old"]["ties"]) == (1, 1)
    by_role = client.get("/api/leaderboard", params={**query, "role": "reviewer"}).json()
    ratings = [r["rating"] for r in by_role["rows"]]
    assert ratings == sorted(ratings, reverse=True) and by_role["role"] == "reviewer"
    assert all(r["ci_low"] is None and r["rank_ub"] is None for r in by_role["rows"])
    assert [r["reviewer"] for r in by_role["rows"]] == ratings
    empty = client.get(
        "/api/leaderboard", params={"tournament": tournament, "language": "rust"}
    ).json()
    assert empty["rows"] == [] and empty["match_count"] == 0 and empty["computed_at"] is not None
    other = client.get("/api/leaderboard", params={"tournament": tournament + 1}).json()
    assert other["rows"] == [] and other["computed_at"] is None


def test_the_cutoff_window_counts_matches_on_tasks_opened_after_both_cutoffs(
    client: TestClient, seeded: tuple[Pool, int]
) -> None:
    pool, _ = seeded
    refresh_boards(pool, None, bootstrap=20)
    board = client.get("/api/leaderboard", params={"after_cutoff": True}).json()
    assert board["window"] == "cutoff" and board["current"]
    # m-old vs m-new: only go-late is after both cutoffs; each vs oracle (a baseline, no
    # cutoff): m-old on py-mid and go-late, m-new on go-late
    assert board["match_count"] == 4
    rows = _rows(board)
    assert (rows["m-old"]["matches"], rows["m-new"]["matches"], rows["oracle"]["matches"]) == (
        3, 2, 3,
    )  # fmt: skip
    python = client.get("/api/leaderboard", params={"after_cutoff": True, "language": "python"})
    assert python.json()["match_count"] == 1
    # a changed cutoff: the stored window is shown as not current, a worker is asked for the new
    changed = client.patch(
        "/api/models/m-new", headers=ADMIN, json={"knowledge_cutoff": "2024-01-01"}
    )
    assert changed.status_code == 200
    stale = client.get("/api/leaderboard", params={"after_cutoff": True}).json()
    assert not stale["current"] and stale["match_count"] == 4
    refresh_window(pool, None, "cutoff", bootstrap=20)
    fresh = client.get("/api/leaderboard", params={"after_cutoff": True}).json()
    assert fresh["current"] and fresh["match_count"] == 7  # py-mid for m-new, go-mid too
    both = client.get(
        "/api/leaderboard", params={"after_cutoff": True, "created_after": "2025-01-01"}
    )
    assert both.status_code == 422 and both.json()["detail"][0]["loc"] == ["query", "created_after"]


def test_a_day_window_is_computed_on_request_with_other_filters(
    client: TestClient, seeded: tuple[Pool, int]
) -> None:
    pool, _ = seeded
    refresh_boards(pool, None, bootstrap=20)
    query = {"created_after": "2025-09-20", "language": "go"}
    first = client.get("/api/leaderboard", params=query).json()
    assert first["computed_at"] is None and not first["current"]
    refresh_window(pool, None, "2025-09-20", bootstrap=20)
    board = client.get("/api/leaderboard", params=query).json()
    assert board["current"] and board["window"] == "after:2025-09-20"
    assert board["match_count"] == 4  # go-mid once, go-late three times
    other_day = client.get("/api/leaderboard", params={**query, "created_after": "2025-10-05"})
    assert other_day.json()["computed_at"] is None  # never another day's board


def test_matches_filter_by_opponent_and_tasks_show_test_counts(
    client: TestClient, seeded: tuple[Pool, int]
) -> None:
    pool, _ = seeded
    pair = {"model": "m-new", "opponent": "oracle", "status": "done"}
    both = client.get("/api/matches", params=pair).json()
    assert both["total"] == 2
    assert all({m["a"], m["b"]} == {"m-new", "oracle"} for m in both["matches"])
    done = client.get("/api/matches", params={"model": "m-new", "status": "done"}).json()
    assert done["total"] == 6
    lone = client.get("/api/matches", params={"opponent": "oracle"})
    assert lone.status_code == 422 and lone.json()["detail"][0]["loc"] == ["query", "opponent"]
    with pool.connection() as conn:
        conn.execute(
            "UPDATE tasks SET validation = %s WHERE instance_id = 'py-mid'",
            ('{"valid": true, "kind": "gold-judged", "fail_to_pass": ["a", "b"],'
             ' "pass_to_pass": ["c", "d", "e"], "flaky": ["f"], "broken": []}',),
        )  # fmt: skip
    tasks = {t["instance_id"]: t for t in client.get("/api/tasks").json()["tasks"]}
    shown = tasks["py-mid"]
    assert (shown["fail_to_pass"], shown["pass_to_pass"], shown["flaky"], shown["broken"]) == (
        2, 3, 1, 0,
    )  # fmt: skip
    assert tasks["py-early"]["fail_to_pass"] is None  # not validated yet
