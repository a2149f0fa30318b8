"""Leaderboards with combined filters, role ratings, round-fact rates, metadata and the
knowledge-cutoff window, fitted by the workers' own functions over matches stored in PostgreSQL;
the same board from `arena ratings` on the exported results; boards stored before the engine's
row layout."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from psycopg.types.json import Jsonb

from api.core.config import ApiSettings
from arena.match import RoundRecord
from arena.players.base import Answer, Role
from arena.protocol import Winner
from arena.ratings import BoardRow, MatchResult, Results, online_elo
from arena.store.matches import end_match, mark_running, store_answer, store_round
from arena.store.models import list_models
from arena.store.pool import Pool, open_pool
from arena.store.tournaments import create_tournament
from arena.tasks.schema import Task
from arena.vocabulary import MatchStatus
from ci_runner.pipeline import Pipeline, ReportFormat, ReportSpec, Step
from ci_runner.types import CIResult, CIStatus
from tests.api.conftest import ADMIN
from tests.command import run_arena
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


CI_S = 3.0  # each round's one CI run


def _record(sub: str, rev: str, played: Played) -> RoundRecord:
    answer = Answer(raw_text="x", diff=None, latency_s=2.0, prompt_tokens=1000,
                    completion_tokens=500)  # fmt: skip
    return RoundRecord(
        submitter=sub, reviewer=rev, patch=answer, tests=answer,
        runs={"tests_on_base": CIResult(status=CIStatus.PASSED, duration_s=CI_S)},
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
    end_match(pool, match_id, MatchStatus.DONE, score=wins, result=result)


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
    specs = {r.name: r.spec for r in list_models(pool, False)}
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
    # what each point of m-old's interval cost: its 6 matches, 2 rounds of one run each
    narrowed = old["narrowed"]
    assert 0 < narrowed < 2000 and old["usage"]["ci_seconds"] == 6 * 2 * CI_S
    assert old["per_point"] == pytest.approx(
        {
            "tokens": 12 * 1500 / narrowed,
            "ci_seconds": 36 / narrowed,
            "cost": old["cost"] / narrowed,
        }
    )
    assert rows["oracle"]["per_point"]["cost"] is None  # no price: unknown, not free


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


def _finish_shuffled(pool: Pool) -> list[int]:
    """Finish times in an order that is neither the matches' ids' nor their tasks': returns
    the done matches' ids in that finish order."""
    with pool.connection() as conn:
        ids = [int(r["id"]) for r in conn.execute(
            "SELECT id FROM matches WHERE status = 'done' ORDER BY id").fetchall()]  # fmt: skip
        order = ids[1::2] + ids[0::2][::-1]
        start = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)
        for minute, match_id in enumerate(order):
            conn.execute(
                "UPDATE matches SET finished_at = %s WHERE id = %s",
                (start + dt.timedelta(minutes=minute), match_id),
            )
    assert order != ids
    return order


BOARD_COLUMNS = set(BoardRow.model_fields) - {"usage"}  # results files record no answers


@pytest.mark.parametrize(
    ("query", "flags"),
    [({}, []), ({"language": "go"}, ["--language", "go"]),
     ({"language": "python", "kind": "gold-judged"}, ["--language", "python", "--kind",
                                                      "gold-judged"])],
)  # fmt: skip
def test_the_command_line_and_the_service_show_the_same_board(
    client: TestClient,
    seeded: tuple[Pool, int],
    tmp_path: Path,
    query: dict[str, str],
    flags: list[str],
) -> None:
    pool, _ = seeded
    finished = _finish_shuffled(pool)
    refresh_boards(pool, None, bootstrap=60)  # what the workers' ratings step does
    served = client.get("/api/leaderboard", params=query).json()["rows"]
    results = tmp_path / "results.jsonl"
    results.write_text(client.get("/api/results.jsonl").text)
    done = run_arena(["ratings", "--results", str(results), "--json", "--bootstrap", "60", *flags])
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert [r["model"] for r in shown] == [r["model"] for r in served] and served
    for cli_row, api_row in zip(shown, served, strict=True):
        for column in sorted(BOARD_COLUMNS):
            assert cli_row[column] == api_row[column], (cli_row["model"], column)
    assert any(r["catch"] is None for r in served)  # "no chances", the same on both sides
    assert all(r["ci_high"] - r["ci_low"] > 0 for r in served)
    # Elo followed the finish times: in id order (or file order) it would differ
    lines = [json.loads(x) for x in results.read_text().splitlines()]
    assert [x["match"] for x in lines] != finished
    assert {x["ci_seconds"] for x in lines} == {2 * CI_S}  # every match's CI time, exported
    in_scope = [
        MatchResult(x["task"], x["a"], x["b"], x["winner"])
        for x in lines
        if x.get("language") == query.get("language", x.get("language"))
        and x.get("kind") == query.get("kind", x.get("kind"))
    ]
    by_id = online_elo(Results.from_matches(in_scope))
    assert any(by_id[r["model"]] != pytest.approx(r["elo"]) for r in served)


V1_ROW = {  # a row as the workers stored it before the engine's BoardRow (layout 1)
    "model": "m-old", "rating": 1100.0, "ci_low": 1000.0, "ci_high": 1200.0, "rank_ub": 1,
    "matches": 6, "wins": 4, "losses": 0, "ties": 2, "elo": 1040.0, "prior_bounded": True,
    "submitter": 1150.0, "reviewer": 1050.0,
    "facts": {"submitted": 6, "correct": 6, "reviewed": 6, "valid": 4, "wrong_patches": 4,
              "caught": 2},
    "usage": {"answers": 12, "prompt_tokens": 12000, "completion_tokens": 6000,
              "latency_s": 2.0},
}  # fmt: skip


def test_boards_stored_before_the_typed_rows_still_load_whole(
    client: TestClient, seeded: tuple[Pool, int]
) -> None:
    pool, tournament = seeded
    no_facts = {k: v for k, v in V1_ROW.items() if k not in ("facts", "usage")}
    no_facts["model"] = "m-new"
    newer = client.get("/api/leaderboard", params={"tournament": tournament}).json()
    assert newer["rows"] == []
    with pool.connection() as conn:
        conn.execute(
            "INSERT INTO rating_snapshots (tournament_id, scope, scope_value, match_count, rows)"
            " VALUES (%s, 'board', '*|*|*', 8, %s)",
            (tournament, Jsonb([V1_ROW, no_facts])),
        )
    board = client.get("/api/leaderboard", params={"tournament": tournament}).json()
    old, new = board["rows"]
    assert (old["patch_correct"], old["rounds_submitted"]) == (1.0, 6)
    assert (old["tests_valid"], old["catch"], old["wrong_patches_reviewed"]) == (4 / 6, 0.5, 4)
    assert old["provisional"] and old["prior_bounded"]  # 6 matches: below the set number
    assert (old["draw"], old["rounds"]) == (None, 12)  # draws were not recorded then
    assert old["cost"] == pytest.approx((12000 * 1.0 + 6000 * 2.0) / 1e6)
    assert (new["catch"], new["rounds_submitted"], new["rounds"]) == (None, 0, 0)
    assert new["usage"] is None and new["cost"] is None
    # a row of the current layout without a newer column gets that column's default
    current = {**json.loads(BoardRow.model_validate(old).model_dump_json()), "v": 2}
    del current["draw"]
    with pool.connection() as conn:
        conn.execute(
            "INSERT INTO rating_snapshots (tournament_id, scope, scope_value, match_count, rows)"
            " VALUES (%s, 'board', '*|*|*', 8, %s)",
            (tournament, Jsonb([current])),
        )
    (again,) = client.get("/api/leaderboard", params={"tournament": tournament}).json()["rows"]
    assert again["draw"] is None and again["patch_correct"] == 1.0
