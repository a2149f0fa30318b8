"""A match's state as stored, and the writes that move it: each under its unique key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from psycopg.types.json import Jsonb

from arena.faults import Fault
from arena.match import RoundRecord
from arena.players.base import Answer, Role
from arena.store.pool import Pool
from arena.tasks.schema import Task, Validation
from arena.vocabulary import MatchStatus


@dataclass(frozen=True)
class RoundState:
    idx: int
    submitter: str
    reviewer: str
    answers: dict[Role, Answer]
    record: RoundRecord | None


@dataclass(frozen=True)
class MatchState:
    id: int
    tournament_id: int
    task_id: int
    a: str
    b: str
    status: MatchStatus
    validation: Validation | None
    rounds: tuple[RoundState, ...]


def load_task(pool: Pool, task_id: int) -> Task:
    """The task with its derived pipeline and its validation, if any."""
    with pool.connection() as conn:
        row = conn.execute(
            "SELECT task, validation FROM tasks WHERE id = %s", (task_id,)
        ).fetchone()
    if row is None:
        raise LookupError(f"no task {task_id}")
    return Task.model_validate({**row["task"], "validation": row["validation"]})


def store_validation(pool: Pool, task_id: int, task: Task, validation: Validation) -> None:
    with pool.connection() as conn:
        conn.execute(
            "UPDATE tasks SET task = %s, validation = %s, validated_at = now()"
            " WHERE id = %s AND validation IS NULL",
            (
                Jsonb(task.model_dump(mode="json", exclude={"validation"})),
                Jsonb(validation.model_dump(mode="json")),
                task_id,
            ),
        )


def load_match(pool: Pool, match_id: int) -> MatchState:
    with pool.connection() as conn:
        row = conn.execute(
            "SELECT m.id, m.tournament_id, m.task_id, m.a, m.b, m.status, t.validation"
            " FROM matches m JOIN tasks t ON t.id = m.task_id WHERE m.id = %s",
            (match_id,),
        ).fetchone()
        if row is None:
            raise LookupError(f"no match {match_id}")
        rounds = conn.execute(
            "SELECT id, idx, submitter, reviewer, record FROM rounds WHERE match_id = %s"
            " ORDER BY idx",
            (match_id,),
        ).fetchall()
        answers = conn.execute(
            "SELECT r.idx, a.role, a.answer FROM answers a JOIN rounds r ON r.id = a.round_id"
            " WHERE r.match_id = %s",
            (match_id,),
        ).fetchall()
    by_round: dict[int, dict[Role, Answer]] = {r["idx"]: {} for r in rounds}
    for answer in answers:
        by_round[answer["idx"]][Role(answer["role"])] = Answer.model_validate(answer["answer"])
    return MatchState(
        id=row["id"],
        tournament_id=row["tournament_id"],
        task_id=row["task_id"],
        a=row["a"],
        b=row["b"],
        status=MatchStatus(row["status"]),
        validation=None
        if row["validation"] is None
        else Validation.model_validate(row["validation"]),
        rounds=tuple(
            RoundState(
                idx=r["idx"],
                submitter=r["submitter"],
                reviewer=r["reviewer"],
                answers=by_round[r["idx"]],
                record=None if r["record"] is None else RoundRecord.model_validate(r["record"]),
            )
            for r in rounds
        ),
    )


def matches_waiting_on_task(pool: Pool, task_id: int) -> list[int]:
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT id FROM matches WHERE task_id = %s AND status IN ('queued', 'running')",
            (task_id,),
        )
        return [int(r["id"]) for r in rows]


def mark_running(pool: Pool, match_id: int) -> None:
    with pool.connection() as conn:
        conn.execute(
            "UPDATE matches SET status = 'running' WHERE id = %s AND status = 'queued'",
            (match_id,),
        )


def store_answer(
    pool: Pool, match_id: int, idx: int, role: Role, model: str, answer: Answer
) -> None:
    with pool.connection() as conn:
        conn.execute(
            "INSERT INTO answers (round_id, role, model, answer, latency_s, prompt_tokens,"
            " completion_tokens)"
            " SELECT id, %s, %s, %s, %s, %s, %s FROM rounds WHERE match_id = %s AND idx = %s"
            " ON CONFLICT (round_id, role) DO NOTHING",
            (
                role.value,
                model,
                Jsonb(answer.model_dump(mode="json")),
                answer.latency_s,
                answer.prompt_tokens,
                answer.completion_tokens,
                match_id,
                idx,
            ),
        )


def store_round(pool: Pool, match_id: int, idx: int, record: RoundRecord) -> None:
    with pool.connection() as conn:
        conn.execute(
            "UPDATE rounds SET record = %s, winner = %s, finished_at = now()"
            " WHERE match_id = %s AND idx = %s AND record IS NULL",
            (Jsonb(record.model_dump(mode="json")), record.winner.value, match_id, idx),
        )


def end_match(
    pool: Pool,
    match_id: int,
    status: MatchStatus,
    reason: str | None = None,
    score: dict[str, int] | None = None,
    result: str | None = None,
    fault: Fault | None = None,
) -> bool:
    """Done, failed (with who was at fault) or skipped: only the first ending counts. True when
    this one did."""
    if fault is not None and status != MatchStatus.FAILED:
        raise ValueError(f"a {status} match has no fault")
    with pool.connection() as conn:
        ended = conn.execute(
            "UPDATE matches SET status = %s, reason = %s, score = %s, result = %s, fault = %s,"
            " at_fault = %s, finished_at = now() WHERE id = %s AND status IN ('queued', 'running')",
            (
                status.value,
                reason,
                None if score is None else Jsonb(score),
                result,
                None if fault is None else fault.component.value,
                None if fault is None else fault.model,
                match_id,
            ),
        )
        return ended.rowcount == 1


def finished_results(
    pool: Pool, tournament_id: int | None, created_after: str | None = None
) -> list[dict[str, Any]]:
    """Every done match (of one tournament, or all; on tasks whose issue was opened after a
    day, if given) with its rounds and its answers' tokens and latency, in a stable order."""
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT m.id, t.instance_id AS task, t.language, t.kind, m.a, m.b, m.result,"
            "  array_agg(json_build_object('submitter', r.submitter, 'reviewer', r.reviewer,"
            "    'winner', r.winner, 'record', r.record) ORDER BY r.idx) AS rounds,"
            "  (SELECT json_agg(json_build_object('model', a.model, 'latency_s', a.latency_s,"
            "     'prompt_tokens', a.prompt_tokens, 'completion_tokens', a.completion_tokens))"
            "   FROM answers a JOIN rounds ra ON ra.id = a.round_id WHERE ra.match_id = m.id)"
            "   AS answers"
            " FROM matches m JOIN tasks t ON t.id = m.task_id JOIN rounds r ON r.match_id = m.id"
            " WHERE m.status = 'done' AND (%(t)s::bigint IS NULL OR m.tournament_id = %(t)s)"
            " AND (%(after)s::text IS NULL OR t.issue_created_at > %(after)s)"
            " GROUP BY m.id, t.instance_id, t.language, t.kind"
            " ORDER BY t.instance_id, m.a, m.b, m.id",
            {"t": tournament_id, "after": created_after},
        )
        return list(rows)
