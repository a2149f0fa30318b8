"""Adaptive tournaments in PostgreSQL: each scheduling pass, as the workers run it, on books
whose matches are played here by a simulated truth (stored answers, rounds and CI runs as
the workers store them), so the goal, the budgets, the bound on matches in flight and the
newcomer's placement are checked against what the store really holds."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from arena.match import RoundRecord
from arena.players.base import Answer, Role
from arena.protocol import Winner
from arena.ratings.adaptive_state import decide
from arena.store.adaptive import CannotAdd, NotAdaptive, add_model, load_book, schedule_pass
from arena.store.matches import end_match, mark_running, store_answer, store_round
from arena.store.pool import Pool
from arena.store.tournaments import create_tournament
from arena.tasks.schema import Task
from arena.vocabulary import MatchStatus
from ci_runner import CIResult
from ci_runner.pipeline import Pipeline, ReportFormat, ReportSpec, Step
from ci_runner.types import CIStatus

PIPELINE = Pipeline(
    steps=(Step(name="test", run="pytest --junitxml=report.xml"),),
    report=ReportSpec(format=ReportFormat.JUNIT, path="report.xml"),
)
TRUTH = {"strong": 1400.0, "middle": 1000.0, "weak": 600.0}
BASELINE = {"kind": "baseline"}
TOKENS_PER_ANSWER = 1500  # 4 answers a match: 6,000 tokens
CI_S_PER_RUN = 30.0  # 2 runs a round: 120 CI seconds a match


def _task(n: int) -> Task:
    return Task(
        instance_id=f"t{n:03d}",
        repo="/nonexistent/repo",
        base_commit="0123456789abcdef" * 2 + "01234567",
        language="python",
        created_at="2025-03-01T10:00:00Z",
        problem_statement="a bug",
        patch="diff --git a/x b/x\n",
        test_patch="diff --git a/t b/t\n",
        pipeline=PIPELINE,
    )


def _adaptive(
    pool: Pool, models: dict[str, float], tasks: int, budget: dict[str, float], in_flight: int = 3,
    goal: dict[str, object] | None = None,
) -> int:  # fmt: skip
    config = {"goal": goal or {"separate": True}, "budget": budget, "in_flight": in_flight}
    specs = dict.fromkeys(models, BASELINE)
    return create_tournament(pool, specs, [_task(n) for n in range(tasks)], "t", {}, config)


def _open_matches(pool: Pool, tournament: int) -> list[tuple[int, str, str]]:
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT id, a, b FROM matches WHERE tournament_id = %s"
            " AND status IN ('queued', 'running') ORDER BY id",
            (tournament,),
        ).fetchall()
    return [(int(r["id"]), r["a"], r["b"]) for r in rows]


def _play(pool: Pool, match_id: int, a: str, b: str, winner: str) -> None:
    """Both rounds stored as the workers store them: the winner submits a correct patch and
    catches the loser's; a tie is two drawn rounds."""
    mark_running(pool, match_id)
    answer = Answer(raw_text="x", diff=None, latency_s=1.0, prompt_tokens=TOKENS_PER_ANSWER - 500,
                    completion_tokens=500)  # fmt: skip
    runs = {k: CIResult(status=CIStatus.PASSED, duration_s=CI_S_PER_RUN) for k in ("x", "y")}
    for idx, (sub, rev) in enumerate(((a, b), (b, a))):
        won = Winner.DRAW if winner == "tie" else (
            Winner.SUBMITTER if sub == winner else Winner.REVIEWER
        )  # fmt: skip
        record = RoundRecord(
            submitter=sub, reviewer=rev, patch=answer, tests=answer, runs=runs,
            patch_applies=True, patch_correct=won is Winner.SUBMITTER,
            tests_valid=won is Winner.REVIEWER, tests_catch=won is Winner.REVIEWER, reasons={},
            winner=won,
        )  # fmt: skip
        store_answer(pool, match_id, idx, Role.SUBMITTER, sub, answer)
        store_answer(pool, match_id, idx, Role.REVIEWER, rev, answer)
        store_round(pool, match_id, idx, record)
    score = {a: int(winner == a) * 2, b: int(winner == b) * 2}
    end_match(pool, match_id, MatchStatus.DONE, score=score, result=winner)


def _winner(truth: dict[str, float], a: str, b: str, rng: np.random.Generator) -> str:
    p = 1 / (1 + 10 ** ((truth[b] - truth[a]) / 400))
    return a if rng.random() < p else b


def _run(pool: Pool, tournament: int, truth: dict[str, float], seed: int = 0) -> list[int]:
    """Scheduling passes and plays until the pass records the end; the matches in flight
    seen after each pass."""
    rng = np.random.default_rng(seed)
    flying: list[int] = []
    for _ in range(2000):
        done = schedule_pass(pool, tournament, lambda book, slots: decide(book, slots, tournament))
        assert done.decision is not None
        if done.decision.stop is not None:
            return flying
        current = _open_matches(pool, tournament)
        flying.append(len(current))
        match_id, a, b = current[0]  # one ends, a slot frees, the next pass fills it
        _play(pool, match_id, a, b, _winner(truth, a, b, rng))
    raise AssertionError("the tournament never stopped")


def _tournament(pool: Pool, tournament: int) -> dict[str, object]:
    with pool.connection() as conn:
        row = conn.execute(
            "SELECT status, stop_reason, models, newcomers, finished_at FROM tournaments"
            " WHERE id = %s",
            (tournament,),
        ).fetchone()
    assert row is not None
    return dict(row)


def test_stops_on_its_goal_with_a_bounded_number_in_flight(pool: Pool) -> None:
    tournament = _adaptive(pool, TRUTH, tasks=40, budget={}, in_flight=3)
    assert _open_matches(pool, tournament) == []  # nothing scheduled before the first pass
    flying = _run(pool, tournament, TRUTH)
    shown = _tournament(pool, tournament)
    assert shown["status"] == "done" and shown["stop_reason"] == "goal"
    assert shown["finished_at"] is not None
    assert max(flying) == 3 and len(flying) < 3 * 40  # far fewer than the round robin
    book = load_book(pool, tournament)
    assert book is not None and not book.in_flight
    keys = [(r.task, *sorted((r.a, r.b))) for r in book.results]
    assert len(keys) == len(set(keys))  # never a (pair, task) twice
    # a pass after the end does nothing
    again = schedule_pass(pool, tournament, lambda book, slots: decide(book, slots, 0))
    assert again.decision is None and again.match_ids == ()


@pytest.mark.parametrize(
    ("budget", "spent_of", "per_match"),
    [
        ({"tokens": 40_000}, "tokens", 4 * TOKENS_PER_ANSWER),
        ({"seconds": 1000.0}, "seconds", 4 * CI_S_PER_RUN),
        ({"matches": 7}, "matches", 1),
    ],
)
def test_a_budget_is_never_exceeded_by_more_than_the_matches_in_flight(
    pool: Pool, budget: dict[str, float], spent_of: str, per_match: float
) -> None:
    close = {"a": 1000.0, "b": 1000.0, "c": 1000.0}  # never separated: only the budget stops
    tournament = _adaptive(pool, close, tasks=40, budget=budget, in_flight=3)
    _run(pool, tournament, close)
    shown = _tournament(pool, tournament)
    assert shown["status"] == "done" and shown["stop_reason"] == "budget"
    book = load_book(pool, tournament)
    assert book is not None
    used = {
        "tokens": sum(c.tokens for c in book.costs),
        "seconds": sum(c.seconds for c in book.costs),
        "matches": len(book.costs),
    }[spent_of]
    cap = budget[spent_of]
    assert used >= cap  # it ran until the cap, not short of it
    # checked before each match is scheduled: the (at most 3) matches in flight when it was
    # last found open may pass it, no more; a match count is never passed
    assert used == cap if spent_of == "matches" else used < cap + 3 * per_match


def test_a_model_past_its_own_token_cap_rests_while_the_others_play(pool: Pool) -> None:
    close = {"a": 1000.0, "b": 1000.0, "c": 1000.0}  # never separated: only the caps stop it
    cap = 20_000  # each model's own answers: 2 a match of 1,500 tokens
    tournament = _adaptive(pool, close, tasks=40, budget={"per_model_tokens": cap}, in_flight=3)
    _run(pool, tournament, close)
    assert _tournament(pool, tournament)["status"] == "done"
    book = load_book(pool, tournament)
    assert book is not None
    own = {m: sum(c.own.get(m, (0, 0.0))[0] for c in book.costs) for m in close}
    assert all(v % (2 * TOKENS_PER_ANSWER) == 0 for v in own.values())
    # capped before each scheduling: a model passes its cap by no more than its matches in
    # flight then (3 at most), and the tournament ends once no two models may play
    assert sorted(v >= cap for v in own.values()).count(True) >= 2, own
    assert all(v < cap + 3 * 2 * TOKENS_PER_ANSWER for v in own.values()), own


def test_money_counts_the_models_registered_prices(pool: Pool) -> None:
    tournament = _adaptive(pool, TRUTH, tasks=10, budget={"money": 0.05}, in_flight=1)
    with pool.connection() as conn:  # $2 / $8 per million for the strong one only
        conn.execute(
            "UPDATE models SET price_input = 2.0, price_output = 8.0 WHERE name = 'strong'"
        )
    _run(pool, tournament, TRUTH)
    book = load_book(pool, tournament)
    assert book is not None and _tournament(pool, tournament)["stop_reason"] == "budget"
    strong = sum(1 for c in book.costs if "strong" in (c.a, c.b))
    per_match = 2 * (1000 * 2.0 + 500 * 8.0) / 1e6  # its two answers of a match
    assert sum(c.money for c in book.costs) == pytest.approx(strong * per_match)
    assert 0.05 <= strong * per_match < 0.05 + per_match  # one in flight at most


def test_several_workers_scheduling_at_once_keep_the_bound(pool: Pool) -> None:
    tournament = _adaptive(pool, TRUTH, tasks=40, budget={}, in_flight=4)
    barrier = threading.Barrier(8)

    def one_pass(seed: int) -> None:  # seeds apart: each would choose other matches alone
        barrier.wait()
        schedule_pass(pool, tournament, lambda book, slots: decide(book, slots, seed))

    threads = [threading.Thread(target=one_pass, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    opened = _open_matches(pool, tournament)
    assert len(opened) == 4


def test_a_model_added_later_is_placed_by_its_own_matches(pool: Pool) -> None:
    tournament = _adaptive(pool, TRUTH, tasks=60, budget={}, goal={"target_width": 300})
    _run(pool, tournament, TRUTH)
    before = load_book(pool, tournament)
    assert before is not None and _tournament(pool, tournament)["stop_reason"] == "goal"
    truth = {**TRUTH, "new": 1200.0}
    add_model(pool, tournament, "new", BASELINE)
    shown = _tournament(pool, tournament)
    assert shown["status"] == "running" and shown["newcomers"] == ["new"]
    assert shown["stop_reason"] is None and shown["finished_at"] is None
    _run(pool, tournament, truth, seed=1)
    after = load_book(pool, tournament)
    assert after is not None
    added = after.results[len(before.results) :]
    assert added and all("new" in (r.a, r.b) for r in added)
    shown = _tournament(pool, tournament)
    assert shown["status"] == "done" and shown["stop_reason"] == "goal"
    assert shown["newcomers"] == [] and "new" in shown["models"]  # type: ignore[operator]
    with pytest.raises(CannotAdd, match="already plays"):
        add_model(pool, tournament, "new", BASELINE)
    robin = create_tournament(pool, dict.fromkeys(TRUTH, BASELINE), [_task(0)], "t")
    with pytest.raises(NotAdaptive):
        add_model(pool, robin, "new", BASELINE)
