"""Aggregates beside the rating snapshots: the results boards are fitted on, head-to-head
tallies, every result streamed, and the model metadata shown beside ratings."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from psycopg.rows import DictRow

from arena.store.pool import Pool

_SCOPE = (
    " (%(t)s::bigint IS NULL OR m.tournament_id = %(t)s)"
    " AND (%(lang)s::text IS NULL OR tk.language = %(lang)s)"
    " AND (%(kind)s::text IS NULL OR tk.kind = %(kind)s)"
)


def _scope(tournament_id: int | None, language: str | None, kind: str | None) -> dict[str, Any]:
    return {"t": tournament_id, "lang": language, "kind": kind}


def pair_tallies(
    pool: Pool, tournament_id: int | None, language: str | None, kind: str | None
) -> list[DictRow]:
    """(a, b, result, n) over finished matches: the head-to-head matrices come from these."""
    with pool.connection() as conn:
        return conn.execute(
            "SELECT m.a, m.b, m.result, count(*) AS n FROM matches m"
            " JOIN tasks tk ON tk.id = m.task_id"
            " WHERE m.status = 'done' AND" + _SCOPE + " GROUP BY m.a, m.b, m.result",
            _scope(tournament_id, language, kind),
        ).fetchall()


def iter_results(pool: Pool, tournament_id: int | None, batch: int = 2000) -> Iterator[DictRow]:
    """Every done or failed match with its rounds' facts, streamed from a server-side cursor."""
    with pool.connection() as conn, conn.transaction():
        cursor = conn.cursor(name="arena_results")
        cursor.itersize = batch
        cursor.execute(
            "SELECT m.id, m.tournament_id, tk.instance_id AS task, tk.language, tk.kind,"
            "  m.a, m.b, m.status, m.result, m.score, m.reason, m.fault, m.at_fault,"
            "  array_agg(json_build_object('submitter', r.submitter,"
            "    'reviewer', r.reviewer, 'winner', r.winner,"
            "    'patch_applies', r.record->'patch_applies',"
            "    'patch_correct', r.record->'patch_correct',"
            "    'tests_valid', r.record->'tests_valid',"
            "    'tests_catch', r.record->'tests_catch',"
            "    'reasons', r.record->'reasons') ORDER BY r.idx) AS rounds"
            " FROM matches m JOIN tasks tk ON tk.id = m.task_id"
            " JOIN rounds r ON r.match_id = m.id"
            " WHERE m.status IN ('done', 'failed')"
            " AND (%(t)s::bigint IS NULL OR m.tournament_id = %(t)s)"
            " GROUP BY m.id, tk.instance_id, tk.language, tk.kind ORDER BY m.id",
            {"t": tournament_id},
        )
        yield from cursor


def rated_matches(
    pool: Pool, tournament_id: int | None, created_after: str | None = None
) -> list[dict[str, Any]]:
    """Every done match (of one tournament, or all; on tasks whose issue was opened after a
    day, if given) with its task's opening date, its rounds' facts (never the whole record:
    CI logs stay in the database) and its answers' tokens and latency, in a stable order."""
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT m.id, t.instance_id AS task, t.language, t.kind, t.issue_created_at AS created,"
            "  m.a, m.b, m.result,"
            "  array_agg(json_build_object('submitter', r.submitter, 'reviewer', r.reviewer,"
            "    'winner', r.winner,"
            "    'patch_applies', (r.record->>'patch_applies')::boolean,"
            "    'patch_correct', (r.record->>'patch_correct')::boolean,"
            "    'tests_valid', (r.record->>'tests_valid')::boolean,"
            "    'tests_catch', (r.record->>'tests_catch')::boolean) ORDER BY r.idx) AS rounds,"
            "  (SELECT json_agg(json_build_object('model', a.model, 'latency_s', a.latency_s,"
            "     'prompt_tokens', a.prompt_tokens, 'completion_tokens', a.completion_tokens))"
            "   FROM answers a JOIN rounds ra ON ra.id = a.round_id WHERE ra.match_id = m.id)"
            "   AS answers"
            " FROM matches m JOIN tasks t ON t.id = m.task_id JOIN rounds r ON r.match_id = m.id"
            " WHERE m.status = 'done' AND (%(t)s::bigint IS NULL OR m.tournament_id = %(t)s)"
            " AND (%(after)s::text IS NULL OR t.issue_created_at > %(after)s)"
            " GROUP BY m.id, t.instance_id, t.language, t.kind, t.issue_created_at"
            " ORDER BY t.instance_id, m.a, m.b, m.id",
            {"t": tournament_id, "after": created_after},
        )
        return [dict(r) for r in rows]


def model_meta(pool: Pool) -> dict[str, DictRow]:
    """Per model (retired too: their history is rated): organization, licence, knowledge
    cutoff, whether it is a baseline, and its prices per million input and output tokens."""
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT name, organization, license, knowledge_cutoff,"
            " spec->>'kind' = 'baseline' AS baseline, price_input, price_output FROM models"
        ).fetchall()
    return {r["name"]: r for r in rows}
