"""What the API reads about tournaments and matches: lists with filters, and whole evidence."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from psycopg import Connection
from psycopg.rows import DictRow

from arena.faults import FaultComponent
from arena.store.pool import Pool
from arena.store.tournaments import MATCH_STATUSES
from arena.vocabulary import MatchStatus


def _counts(rows: list[DictRow]) -> dict[int, dict[str, int]]:
    found: dict[int, dict[str, int]] = {}
    for r in rows:
        found.setdefault(int(r["tournament_id"]), {s: 0 for s in MATCH_STATUSES})[r["status"]] = (
            int(r["n"])
        )
    return found


_TOURNAMENT = (
    "SELECT id, models, tasks_spec, settings, status, created_at, finished_at, mode, adaptive,"
    " stop_reason, newcomers FROM tournaments"
)


def list_tournaments(pool: Pool, limit: int, offset: int) -> tuple[list[DictRow], int]:
    with pool.connection() as conn:
        rows = conn.execute(
            _TOURNAMENT + " ORDER BY id DESC LIMIT %s OFFSET %s", (limit, offset)
        ).fetchall()
        counts = _counts(
            conn.execute(
                "SELECT tournament_id, status, count(*) AS n FROM matches"
                " WHERE tournament_id = ANY(%s) GROUP BY tournament_id, status",
                ([r["id"] for r in rows],),
            ).fetchall()
        )
        failures = _endpoint_failures(conn, [int(r["id"]) for r in rows])
        spending = _spending(conn, [int(r["id"]) for r in rows])
        total = conn.execute("SELECT count(*) AS n FROM tournaments").fetchone()
    assert total is not None
    empty = {s: 0 for s in MATCH_STATUSES}
    return [
        {
            **r,
            "counts": counts.get(int(r["id"]), empty),
            "endpoint_failures": failures[int(r["id"])],
            "spending": spending[int(r["id"])],
        }
        for r in rows
    ], int(total["n"])


def get_tournament(pool: Pool, tournament_id: int) -> DictRow | None:
    with pool.connection() as conn:
        row = conn.execute(_TOURNAMENT + " WHERE id = %s", (tournament_id,)).fetchone()
        if row is None:
            return None
        counts = _counts(
            conn.execute(
                "SELECT tournament_id, status, count(*) AS n FROM matches"
                " WHERE tournament_id = %s GROUP BY tournament_id, status",
                (tournament_id,),
            ).fetchall()
        )
        failures = _endpoint_failures(conn, [tournament_id])
        spending = _spending(conn, [tournament_id])
    return {
        **row,
        "counts": counts.get(tournament_id, {s: 0 for s in MATCH_STATUSES}),
        "endpoint_failures": failures[tournament_id],
        "spending": spending[tournament_id],
    }


@dataclass(frozen=True)
class EndpointFailure:
    """A match that a model's endpoint failed, as the tournament's loud report reads it."""

    match_id: int
    tournament_id: int
    at_fault: str  # the model
    reason: str


def _endpoint_failures(
    conn: Connection[DictRow], tournament_ids: list[int]
) -> dict[int, list[EndpointFailure]]:
    """Each tournament's matches that a model's endpoint failed, in the order they failed
    (finish time, then id)."""
    rows = conn.execute(
        "SELECT id, tournament_id, at_fault, reason FROM matches"
        " WHERE tournament_id = ANY(%s) AND status = 'failed' AND fault = %s"
        " ORDER BY finished_at, id",
        (tournament_ids, FaultComponent.MODEL_ENDPOINT.value),
    ).fetchall()
    found: dict[int, list[EndpointFailure]] = {t: [] for t in tournament_ids}
    for r in rows:
        found[int(r["tournament_id"])].append(
            EndpointFailure(int(r["id"]), int(r["tournament_id"]), r["at_fault"], r["reason"] or "")
        )
    return found


@dataclass(frozen=True)
class ModelSpending:
    """What one model's part of a tournament cost: the matches it played to an end (done or
    failed), the CI time of those matches (each match's runs judge both its models, so they
    count for both), its own answers' tokens and their price (None: no registered price)."""

    model: str
    matches: int
    ci_seconds: float
    tokens: int
    money_usd: float | None


_SPENDING = """
WITH ended AS (
  SELECT id, tournament_id, a, b FROM matches
  WHERE tournament_id = ANY(%(t)s) AND status IN ('done', 'failed')
), played AS (
  SELECT id, tournament_id, a AS model FROM ended UNION ALL
  SELECT id, tournament_id, b FROM ended
), ci AS (
  SELECT r.match_id, sum((run.value->>'duration_s')::double precision) AS seconds
  FROM rounds r JOIN ended e ON e.id = r.match_id, jsonb_each(r.record->'runs') AS run
  WHERE r.record IS NOT NULL GROUP BY r.match_id
), own AS (
  SELECT e.tournament_id, a.model,
    sum(a.prompt_tokens + a.completion_tokens) AS tokens,
    sum(CASE WHEN p.price_input IS NULL AND p.price_output IS NULL THEN NULL
        ELSE (a.prompt_tokens * coalesce(p.price_input, 0)
              + a.completion_tokens * coalesce(p.price_output, 0)) / 1e6 END) AS money
  FROM answers a JOIN rounds r ON r.id = a.round_id JOIN ended e ON e.id = r.match_id
  LEFT JOIN models p ON p.name = a.model GROUP BY e.tournament_id, a.model
)
SELECT pl.tournament_id, pl.model, count(*) AS matches,
  coalesce(sum(ci.seconds), 0) AS ci_seconds,
  coalesce(max(own.tokens), 0) AS tokens, max(own.money) AS money
FROM played pl LEFT JOIN ci ON ci.match_id = pl.id
LEFT JOIN own ON own.tournament_id = pl.tournament_id AND own.model = pl.model
GROUP BY pl.tournament_id, pl.model ORDER BY pl.tournament_id, pl.model
"""


def _spending(
    conn: Connection[DictRow], tournament_ids: list[int]
) -> dict[int, list[ModelSpending]]:
    found: dict[int, list[ModelSpending]] = {t: [] for t in tournament_ids}
    for r in conn.execute(_SPENDING, {"t": tournament_ids}):
        found[int(r["tournament_id"])].append(
            ModelSpending(
                r["model"],
                int(r["matches"]),
                float(r["ci_seconds"]),
                int(r["tokens"]),
                None if r["money"] is None else float(r["money"]),
            )
        )
    return found


@dataclass(frozen=True)
class MatchFilter:
    tournament: int | None = None
    model: str | None = None
    opponent: str | None = None  # with model: only matches of model against this one
    task: str | None = None  # instance id
    language: str | None = None
    result: str | None = None  # a model's name (it won) or "tie"
    status: MatchStatus | None = None

    def where(self) -> tuple[str, dict[str, Any]]:
        clauses = ["TRUE"]
        if self.tournament is not None:
            clauses.append("m.tournament_id = %(tournament)s")
        if self.model is not None:
            clauses.append("(m.a = %(model)s OR m.b = %(model)s)")
        if self.opponent is not None:
            clauses.append("(m.a = %(opponent)s OR m.b = %(opponent)s)")
        if self.task is not None:
            clauses.append("t.instance_id = %(task)s")
        if self.language is not None:
            clauses.append("t.language = %(language)s")
        if self.result is not None:
            clauses.append("m.result = %(result)s")
        if self.status is not None:
            clauses.append("m.status = %(status)s")
        return " AND ".join(clauses), {
            "tournament": self.tournament,
            "model": self.model,
            "opponent": self.opponent,
            "task": self.task,
            "language": self.language,
            "result": self.result,
            "status": None if self.status is None else self.status.value,
        }


_MATCH = (
    "SELECT m.id, m.tournament_id, t.instance_id AS task, t.language, t.kind, m.a, m.b,"
    " m.status, m.score, m.result, m.reason, m.fault, m.at_fault, m.created_at, m.finished_at"
    " FROM matches m JOIN tasks t ON t.id = m.task_id"
)


def list_matches(
    pool: Pool, found: MatchFilter, limit: int, offset: int
) -> tuple[list[DictRow], int]:
    where, params = found.where()
    with pool.connection() as conn:
        rows = conn.execute(
            f"{_MATCH} WHERE {where} ORDER BY m.id DESC LIMIT %(limit)s OFFSET %(offset)s",
            {**params, "limit": limit, "offset": offset},
        ).fetchall()
        total = conn.execute(
            f"SELECT count(*) AS n FROM matches m JOIN tasks t ON t.id = m.task_id WHERE {where}",
            params,
        ).fetchone()
    assert total is not None
    return rows, int(total["n"])


@dataclass(frozen=True)
class MatchEvidence:
    match: dict[str, Any]
    task: dict[str, Any]
    validation: dict[str, Any] | None
    rounds: list[dict[str, Any]]
    answers: list[dict[str, Any]]  # with each model's prices, for the cost


def match_evidence(pool: Pool, match_id: int) -> MatchEvidence | None:
    """One query (one round trip): a match page is the API's most frequent heavy read."""
    with pool.connection() as conn:
        row = conn.execute(
            "SELECT m.id, m.tournament_id, t.instance_id AS task, t.language, t.kind, m.a, m.b,"
            " m.status, m.score, m.result, m.reason, m.fault, m.at_fault, m.created_at,"
            " m.finished_at, t.task AS task_record, t.validation,"
            " (SELECT coalesce(json_agg(json_build_object('idx', r.idx,"
            "    'submitter', r.submitter, 'reviewer', r.reviewer, 'record', r.record,"
            "    'winner', r.winner, 'finished_at', r.finished_at) ORDER BY r.idx), '[]')"
            "  FROM rounds r WHERE r.match_id = m.id) AS rounds,"
            " (SELECT coalesce(json_agg(json_build_object('idx', r.idx, 'role', a.role,"
            "    'model', a.model, 'answer', a.answer, 'latency_s', a.latency_s,"
            "    'prompt_tokens', a.prompt_tokens, 'completion_tokens', a.completion_tokens,"
            "    'price_input', md.price_input, 'price_output', md.price_output)"
            "    ORDER BY r.idx, a.role DESC), '[]')"
            "  FROM answers a JOIN rounds r ON r.id = a.round_id"
            "  LEFT JOIN models md ON md.name = a.model WHERE r.match_id = m.id) AS answers"
            " FROM matches m JOIN tasks t ON t.id = m.task_id WHERE m.id = %s",
            (match_id,),
        ).fetchone()
    if row is None:
        return None
    match = {k: v for k, v in row.items() if k not in ("task_record", "validation", "rounds",
                                                       "answers")}  # fmt: skip
    return MatchEvidence(
        match, row["task_record"], row["validation"], row["rounds"], row["answers"]
    )
