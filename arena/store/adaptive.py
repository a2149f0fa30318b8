"""Adaptive tournaments in the store: their books, their next matches, their end.

Each scheduling pass runs in one transaction holding the tournament's row lock (`FOR
UPDATE`): two workers handling two finished matches at once take turns, and the second sees
the matches the first inserted, so the number in flight never passes its bound and no
(pair, task) is inserted twice. A pass repeated (a redelivered message, the reconciler)
decides again from the same books: nothing new when the slots are full.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from psycopg import Connection
from psycopg.rows import DictRow
from psycopg.types.json import Jsonb

from arena.ratings.adaptive_state import Book, Decision
from arena.ratings.pairing import Scheduled
from arena.ratings.records import MatchResult, MatchWinner
from arena.ratings.stopping import Budget, Goal, MatchCost
from arena.store.pool import Pool
from arena.vocabulary import OPEN_MATCH, MatchStatus, TournamentStatus

DEFAULT_IN_FLIGHT = 4


class NotAdaptive(ValueError):
    pass


@dataclass(frozen=True)
class AdaptiveConfig:
    """As stored in `tournaments.adaptive` (JSON)."""

    goal: Goal
    budget: Budget
    in_flight: int

    @classmethod
    def from_json(cls, stored: Mapping[str, Any]) -> AdaptiveConfig:
        return cls(
            goal=Goal(**stored.get("goal", {})),
            budget=Budget(**stored.get("budget", {})),
            in_flight=int(stored.get("in_flight", DEFAULT_IN_FLIGHT)),
        )


# per match: its CI runs' seconds (every run of its judged rounds), its answers' tokens and
# their price at the models' registered prices per million (a model without one costs 0),
# and the same per model that answered (`own`: its per-model caps)
_MATCHES = """
SELECT m.id, t.instance_id AS task, m.a, m.b, m.status, m.result,
  coalesce((SELECT sum((run.value->>'duration_s')::double precision)
            FROM rounds r, jsonb_each(r.record->'runs') AS run
            WHERE r.match_id = m.id AND r.record IS NOT NULL), 0) AS ci_seconds,
  coalesce((SELECT sum(a.prompt_tokens + a.completion_tokens)
            FROM answers a JOIN rounds r ON r.id = a.round_id WHERE r.match_id = m.id), 0)
    AS tokens,
  coalesce((SELECT sum((a.prompt_tokens * coalesce(p.price_input, 0)
                      + a.completion_tokens * coalesce(p.price_output, 0)) / 1e6)
            FROM answers a JOIN rounds r ON r.id = a.round_id
            LEFT JOIN models p ON p.name = a.model WHERE r.match_id = m.id), 0) AS money,
  (SELECT json_object_agg(o.model, json_build_array(o.tokens, o.money)) FROM (
     SELECT a.model, sum(a.prompt_tokens + a.completion_tokens) AS tokens,
       sum((a.prompt_tokens * coalesce(p.price_input, 0)
            + a.completion_tokens * coalesce(p.price_output, 0)) / 1e6) AS money
     FROM answers a JOIN rounds r ON r.id = a.round_id
     LEFT JOIN models p ON p.name = a.model WHERE r.match_id = m.id GROUP BY a.model) o)
    AS own
FROM matches m JOIN tasks t ON t.id = m.task_id
WHERE m.tournament_id = %s ORDER BY m.id
"""


def _book(conn: Connection[DictRow], row: DictRow) -> Book:
    config = AdaptiveConfig.from_json(row["adaptive"])
    pool_rows = conn.execute(
        "SELECT instance_id FROM tasks WHERE id = ANY(%s) ORDER BY instance_id",
        (row["task_ids"],),
    ).fetchall()
    results: list[MatchResult] = []
    failed: list[Scheduled] = []
    flying: list[Scheduled] = []
    costs: list[MatchCost] = []
    invalid: set[str] = set()
    for m in conn.execute(_MATCHES, (row["id"],)):
        played = Scheduled(m["task"], m["a"], m["b"])
        status = MatchStatus(m["status"])
        if status in OPEN_MATCH:
            flying.append(played)
        elif status is MatchStatus.SKIPPED:  # its task is invalid: out of the pool, no cost
            invalid.add(m["task"])
        elif status in (MatchStatus.DONE, MatchStatus.FAILED):
            costs.append(
                MatchCost(
                    m["a"],
                    m["b"],
                    float(m["ci_seconds"]),
                    int(m["tokens"]),
                    float(m["money"]),
                    {k: (int(t), float(p)) for k, (t, p) in (m["own"] or {}).items()},
                )
            )
            if status is MatchStatus.FAILED:
                failed.append(played)
            else:
                result = m["result"]
                winner: MatchWinner = (
                    "tie" if result == "tie" else ("a" if result == m["a"] else "b")
                )
                results.append(MatchResult(m["task"], m["a"], m["b"], winner))
    return Book(
        models=tuple(row["models"]),
        tasks=tuple(r["instance_id"] for r in pool_rows if r["instance_id"] not in invalid),
        results=tuple(results),
        failed=tuple(failed),
        in_flight=tuple(flying),
        costs=tuple(costs),
        goal=config.goal,
        budget=config.budget,
        newcomers=tuple(row["newcomers"]),
    )


_ROW = "SELECT id, models, adaptive, task_ids, newcomers, status FROM tournaments"


def load_book(pool: Pool, tournament_id: int) -> Book | None:
    """The books of an adaptive tournament (None: no such tournament, or a round robin)."""
    with pool.connection() as conn:
        row = conn.execute(
            _ROW + " WHERE id = %s AND mode = 'adaptive'", (tournament_id,)
        ).fetchone()
        return None if row is None else _book(conn, row)


def is_adaptive(pool: Pool, tournament_id: int) -> bool:
    with pool.connection() as conn:
        row = conn.execute(
            "SELECT mode FROM tournaments WHERE id = %s", (tournament_id,)
        ).fetchone()
    return row is not None and row["mode"] == "adaptive"


def adaptive_goal(pool: Pool, tournament_id: int) -> Goal | None:
    """The goal of an adaptive tournament (None: a round robin, or no such tournament)."""
    with pool.connection() as conn:
        row = conn.execute(
            "SELECT adaptive FROM tournaments WHERE id = %s", (tournament_id,)
        ).fetchone()
    return (
        None
        if row is None or row["adaptive"] is None
        else AdaptiveConfig.from_json(row["adaptive"]).goal
    )


@dataclass(frozen=True)
class Pass:
    """What one scheduling pass did: the matches it inserted, or the end it recorded."""

    match_ids: tuple[int, ...]
    decision: Decision | None  # None: the tournament was not running (cancelled, done)


def schedule_pass(pool: Pool, tournament_id: int, decide: Callable[[Book, int], Decision]) -> Pass:
    """Under the tournament's row lock: the books, the engine's decision (`decide(book,
    slots)`), and its record: the new matches with their rounds, or the tournament done with
    its stop reason (the models being placed then are placed)."""
    with pool.connection() as conn, conn.transaction():
        row = conn.execute(
            _ROW + " WHERE id = %s AND mode = 'adaptive' FOR UPDATE", (tournament_id,)
        ).fetchone()
        if row is None or row["status"] != TournamentStatus.RUNNING:
            return Pass((), None)
        book = _book(conn, row)
        decision = decide(book, AdaptiveConfig.from_json(row["adaptive"]).in_flight)
        if decision.stop is not None:
            conn.execute(
                "UPDATE tournaments SET status = 'done', finished_at = now(), stop_reason = %s,"
                " newcomers = '{}' WHERE id = %s",
                (decision.stop.value, tournament_id),
            )
            return Pass((), decision)
        ids: list[int] = []
        for pick in decision.picks:
            match = conn.execute(
                "INSERT INTO matches (tournament_id, task_id, a, b)"
                " SELECT %(t)s, id, %(a)s, %(b)s FROM tasks"
                " WHERE id = ANY(%(pool)s) AND instance_id = %(task)s"
                " ORDER BY id DESC LIMIT 1"
                " ON CONFLICT (tournament_id, task_id, a, b) DO NOTHING RETURNING id",
                {"t": tournament_id, "a": pick.a, "b": pick.b, "pool": row["task_ids"],
                 "task": pick.task},
            ).fetchone()  # fmt: skip
            if match is None:
                continue
            conn.execute(
                "INSERT INTO rounds (match_id, idx, submitter, reviewer)"
                " VALUES (%(m)s, 0, %(a)s, %(b)s), (%(m)s, 1, %(b)s, %(a)s)",
                {"m": match["id"], "a": pick.a, "b": pick.b},
            )
            ids.append(int(match["id"]))
        return Pass(tuple(ids), decision)


class CannotAdd(ValueError):
    pass


def add_model(
    pool: Pool,
    tournament_id: int,
    name: str,
    spec: Mapping[str, Any],
    budget: Mapping[str, Any] | None = None,
) -> None:
    """The model joins the tournament to be placed: it runs again (if it had ended) with
    matches for the newcomer only, under `budget` if given (else the one it had)."""
    with pool.connection() as conn, conn.transaction():
        row = conn.execute(
            "SELECT models, mode, status FROM tournaments WHERE id = %s FOR UPDATE",
            (tournament_id,),
        ).fetchone()
        if row is None:
            raise LookupError(f"no tournament {tournament_id}")
        if row["mode"] != "adaptive":
            raise NotAdaptive(f"tournament {tournament_id} is a round robin: its pairs are fixed")
        if row["status"] == TournamentStatus.CANCELLED:
            raise CannotAdd(f"tournament {tournament_id} was cancelled")
        if name in row["models"]:
            raise CannotAdd(f"{name} already plays in tournament {tournament_id}")
        conn.execute(
            "INSERT INTO models (name, spec) VALUES (%s, %s)"
            " ON CONFLICT (name) DO UPDATE SET spec = EXCLUDED.spec",
            (name, Jsonb(dict(spec))),
        )
        conn.execute(
            "UPDATE tournaments SET models = array_append(models, %(n)s),"
            " newcomers = array_append(newcomers, %(n)s), status = 'running',"
            " finished_at = NULL, stop_reason = NULL,"
            " adaptive = CASE WHEN %(budget)s::jsonb IS NULL THEN adaptive"
            "   ELSE jsonb_set(adaptive, '{budget}', %(budget)s::jsonb) END"
            " WHERE id = %(t)s",
            {"n": name, "t": tournament_id, "budget": None if budget is None else Jsonb(budget)},
        )
