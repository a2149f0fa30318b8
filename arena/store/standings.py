"""Aggregates beside the rating snapshots: the results boards are fitted on (as the engine's
typed match records), head-to-head tallies, every result streamed, and the model metadata
shown beside ratings."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from psycopg.rows import DictRow

from arena.ratings.matrices import PairTally
from arena.ratings.records import AnswerUsage, MatchResult, MatchWinner, RoundResult
from arena.ratings.scopes import ModelDates
from arena.store.pool import Pool

_SCOPE = (
    " (%(t)s::bigint IS NULL OR m.tournament_id = %(t)s)"
    " AND (%(lang)s::text IS NULL OR tk.language = %(lang)s)"
    " AND (%(kind)s::text IS NULL OR tk.kind = %(kind)s)"
)


def _scope(tournament_id: int | None, language: str | None, kind: str | None) -> dict[str, Any]:
    return {"t": tournament_id, "lang": language, "kind": kind}


def _winner(a: str, b: str, result: str) -> MatchWinner:
    """The stored result (the winning model, or 'tie') as a results line says it."""
    return "tie" if result == "tie" else ("a" if result == a else "b")


def pair_tallies(
    pool: Pool, tournament_id: int | None, language: str | None, kind: str | None
) -> list[PairTally]:
    """(a, b, winner, n) over finished matches: the head-to-head matrices come from these."""
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT m.a, m.b, m.result, count(*) AS n FROM matches m"
            " JOIN tasks tk ON tk.id = m.task_id"
            " WHERE m.status = 'done' AND" + _SCOPE + " GROUP BY m.a, m.b, m.result",
            _scope(tournament_id, language, kind),
        ).fetchall()
    return [PairTally(r["a"], r["b"], _winner(r["a"], r["b"], r["result"]), int(r["n"]))
            for r in rows]  # fmt: skip


def iter_results(pool: Pool, tournament_id: int | None, batch: int = 2000) -> Iterator[DictRow]:
    """Every done or failed match with its rounds' facts, streamed from a server-side cursor."""
    with pool.connection() as conn, conn.transaction():
        cursor = conn.cursor(name="arena_results")
        cursor.itersize = batch
        cursor.execute(
            "SELECT m.id, m.tournament_id, tk.instance_id AS task, tk.language, tk.kind,"
            "  m.a, m.b, m.status, m.result, m.score, m.reason, m.fault, m.at_fault, m.finished_at,"
            "  (SELECT sum((run.value->>'duration_s')::double precision)"
            "   FROM rounds rc, jsonb_each(rc.record->'runs') AS run"
            "   WHERE rc.match_id = m.id AND rc.record IS NOT NULL) AS ci_seconds,"
            "  max(r.record->>'rules_version') AS rules_version,"
            "  coalesce(bool_or(r.record->>'guarded' = 'false'), false) AS unguarded,"
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
) -> list[MatchResult]:
    """Every done match (of one tournament, or all; on tasks whose issue was opened after a
    day, if given) with its task's opening date, its rounds' facts (never the whole record:
    CI logs stay in the database) and its answers' tokens and latency, in finish order."""
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT m.id, t.instance_id AS task, t.language, t.kind, t.issue_created_at AS created,"
            "  m.a, m.b, m.result, m.finished_at,"
            "  (SELECT sum((run.value->>'duration_s')::double precision)"
            "   FROM rounds rc, jsonb_each(rc.record->'runs') AS run"
            "   WHERE rc.match_id = m.id AND rc.record IS NOT NULL) AS ci_seconds,"
            "  max(r.record->>'rules_version') AS rules_version,"
            "  coalesce(bool_or(r.record->>'guarded' = 'false'), false) AS unguarded,"
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
            " ORDER BY m.finished_at, m.id",
            {"t": tournament_id, "after": created_after},
        ).fetchall()
    return [_match_result(r) for r in rows]


def _match_result(row: Mapping[str, Any]) -> MatchResult:
    rounds = tuple(
        RoundResult(
            task=row["task"],
            submitter=r["submitter"],
            reviewer=r["reviewer"],
            winner=r["winner"],
            patch_applies=bool(r["patch_applies"]),
            patch_correct=bool(r["patch_correct"]),
            tests_valid=bool(r["tests_valid"]),
            tests_catch=bool(r["tests_catch"]),
            language=row["language"],
            kind=row["kind"],
        )
        for r in row["rounds"]
    )
    answers = tuple(
        AnswerUsage(a["model"], a["prompt_tokens"], a["completion_tokens"], a["latency_s"])
        for a in row["answers"] or ()
    )
    return MatchResult(
        task=row["task"],
        a=row["a"],
        b=row["b"],
        winner=_winner(row["a"], row["b"], row["result"]),
        language=row["language"],
        kind=row["kind"],
        rounds=rounds,
        finished_at=row["finished_at"],
        match_id=int(row["id"]),
        opened=row["created"],
        answers=answers,
        ci_seconds=None if row["ci_seconds"] is None else float(row["ci_seconds"]),
        rules_version=row["rules_version"],
        unguarded=bool(row["unguarded"]),
    )


def model_meta(pool: Pool) -> dict[str, DictRow]:
    """Per model (retired too: their history is rated): organization, licence, knowledge
    cutoff, whether it is a baseline, and its prices per million input and output tokens."""
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT name, organization, license, knowledge_cutoff,"
            " spec->>'kind' = 'baseline' AS baseline, price_input, price_output FROM models"
        ).fetchall()
    return {r["name"]: r for r in rows}


def dates_of(meta: Mapping[str, Mapping[str, Any]]) -> dict[str, ModelDates]:
    """What the cutoff window needs, from stored model metadata (`knowledge_cutoff` a date or
    None, `baseline`)."""
    return {
        name: ModelDates(
            None if m["knowledge_cutoff"] is None else m["knowledge_cutoff"].isoformat(),
            bool(m["baseline"]),
        )
        for name, m in meta.items()
    }


def model_dates(pool: Pool) -> dict[str, ModelDates]:
    return dates_of(model_meta(pool))
