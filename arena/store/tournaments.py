"""Recording tournaments and reading their progress."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from psycopg.types.json import Jsonb

from arena.store.pool import Pool
from arena.tasks.schema import Task
from arena.vocabulary import CONTEXT_BUDGET_TOKENS, MatchStatus, TournamentStatus

MATCH_STATUSES = tuple(s.value for s in MatchStatus)  # every count keyed by each


def create_tournament(
    pool: Pool,
    models: Mapping[str, dict[str, Any]],
    tasks: Sequence[Task],
    tasks_spec: str,
    settings: Mapping[str, Any] | None = None,
    adaptive: Mapping[str, Any] | None = None,
) -> int:
    """One transaction: the models, the tasks (reused by fingerprint), every match and round.

    Pairs follow `arena tournament`: each unordered pair once, the first named submits first.
    An adaptive tournament (`adaptive`: its goal, budget and matches in flight) records its
    task pool and no match: the workers schedule them a few at a time (`store.adaptive`).
    """
    names = list(models)
    with pool.connection() as conn, conn.transaction():
        for name, spec in models.items():
            conn.execute(
                "INSERT INTO models (name, spec) VALUES (%s, %s)"
                " ON CONFLICT (name) DO UPDATE SET spec = EXCLUDED.spec",
                (name, Jsonb(spec)),
            )
        row = conn.execute(
            "INSERT INTO tournaments (models, tasks_spec, settings, mode, adaptive)"
            " VALUES (%s, %s, %s, %s, %s) RETURNING id",
            (
                names,
                tasks_spec,
                Jsonb(dict(settings or {})),
                "round_robin" if adaptive is None else "adaptive",
                None if adaptive is None else Jsonb(dict(adaptive)),
            ),
        ).fetchone()
        assert row is not None
        tournament_id = int(row["id"])
        task_ids: list[int] = []
        for task in tasks:
            task_row = conn.execute(
                "INSERT INTO tasks (instance_id, fingerprint, language, task)"
                " VALUES (%s, %s, %s, %s) ON CONFLICT (instance_id, fingerprint)"
                " DO UPDATE SET instance_id = EXCLUDED.instance_id RETURNING id",
                (
                    task.instance_id,
                    task.fingerprint(),
                    task.language.value,
                    Jsonb(task.model_dump(mode="json")),
                ),
            ).fetchone()
            assert task_row is not None
            task_ids.append(int(task_row["id"]))
            if adaptive is not None:
                continue
            for a, b in itertools.combinations(names, 2):
                match = conn.execute(
                    "INSERT INTO matches (tournament_id, task_id, a, b) VALUES (%s, %s, %s, %s)"
                    " RETURNING id",
                    (tournament_id, task_row["id"], a, b),
                ).fetchone()
                assert match is not None
                conn.execute(
                    "INSERT INTO rounds (match_id, idx, submitter, reviewer)"
                    " VALUES (%(m)s, 0, %(a)s, %(b)s), (%(m)s, 1, %(b)s, %(a)s)",
                    {"m": match["id"], "a": a, "b": b},
                )
        if adaptive is not None:
            conn.execute(
                "UPDATE tournaments SET task_ids = %s WHERE id = %s", (task_ids, tournament_id)
            )
    return tournament_id


@dataclass(frozen=True)
class Progress:
    tournament_id: int
    status: TournamentStatus
    counts: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def finished(self) -> bool:
        ended = self.status in (TournamentStatus.DONE, TournamentStatus.CANCELLED)
        return ended and not self.counts.get(MatchStatus.RUNNING)


class UnknownTournament(ValueError):
    pass


def tournament_progress(pool: Pool, tournament_id: int) -> Progress:
    with pool.connection() as conn:
        row = conn.execute(
            "SELECT status FROM tournaments WHERE id = %s", (tournament_id,)
        ).fetchone()
        if row is None:
            raise UnknownTournament(f"no tournament {tournament_id}")
        counts = {s: 0 for s in MATCH_STATUSES}
        for r in conn.execute(
            "SELECT status, count(*) AS n FROM matches WHERE tournament_id = %s GROUP BY status",
            (tournament_id,),
        ):
            counts[r["status"]] = int(r["n"])
    return Progress(tournament_id, TournamentStatus(row["status"]), counts)


def cancel_tournament(pool: Pool, tournament_id: int) -> int:
    """Stops scheduling: every unfinished match is cancelled (a step already running completes,
    nothing after it is scheduled; what it stored stays as evidence). Returns how many."""
    with pool.connection() as conn, conn.transaction():
        row = conn.execute(
            "UPDATE tournaments SET status = 'cancelled', finished_at = now()"
            " WHERE id = %s AND status = 'running' RETURNING id",
            (tournament_id,),
        ).fetchone()
        if row is None:
            tournament_progress(pool, tournament_id)  # raises for an unknown id
            return 0
        cancelled = conn.execute(
            "UPDATE matches SET status = 'cancelled', finished_at = now(),"
            " reason = 'the tournament was cancelled'"
            " WHERE tournament_id = %s AND status IN ('queued', 'running')",
            (tournament_id,),
        )
        return cancelled.rowcount


def running_tournaments(pool: Pool) -> list[int]:
    with pool.connection() as conn:
        rows = conn.execute("SELECT id FROM tournaments WHERE status = 'running' ORDER BY id")
        return [int(r["id"]) for r in rows]


def unfinished_matches(pool: Pool, tournament_id: int) -> list[int]:
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT id FROM matches WHERE tournament_id = %s AND status IN ('queued', 'running')"
            " ORDER BY id",
            (tournament_id,),
        )
        return [int(r["id"]) for r in rows]


def tournaments_to_reconcile(pool: Pool, period_s: float) -> list[int]:
    """Running tournaments no worker reconciled within the period; each claimed by one caller."""
    with pool.connection() as conn:
        rows = conn.execute(
            "UPDATE tournaments SET reconciled_at = now() WHERE status = 'running'"
            " AND (reconciled_at IS NULL OR reconciled_at < now() - make_interval(secs => %s))"
            " RETURNING id",
            (period_s,),
        )
        return sorted(int(r["id"]) for r in rows)


def stalled_matches(pool: Pool, tournament_id: int, stall_s: float) -> list[int]:
    """Unfinished matches nobody works on (no live lease) and nothing was enqueued for lately."""
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT m.id FROM matches m WHERE m.tournament_id = %(t)s"
            " AND m.status IN ('queued', 'running')"
            " AND m.touched_at < now() - make_interval(secs => %(stall)s)"
            " AND NOT EXISTS (SELECT 1 FROM steps s WHERE s.status = 'running'"
            "   AND s.lease_until > now()"
            "   AND (s.match_id = m.id OR s.key = 'prepare:' || m.task_id))"
            " ORDER BY m.id",
            {"t": tournament_id, "stall": stall_s},
        )
        return [int(r["id"]) for r in rows]


def complete_tournament(pool: Pool, tournament_id: int) -> bool:
    """A round robin is done once no match is left to play; True when this call marked it.
    (An adaptive one ends when its scheduling pass says why: `store.adaptive`.)"""
    with pool.connection() as conn:
        done = conn.execute(
            "UPDATE tournaments SET status = 'done', finished_at = now()"
            " WHERE id = %(t)s AND status = 'running' AND mode = 'round_robin' AND NOT EXISTS ("
            "   SELECT 1 FROM matches WHERE tournament_id = %(t)s"
            "   AND status IN ('queued', 'running'))",
            {"t": tournament_id},
        )
        return done.rowcount == 1


def touch_match(pool: Pool, match_id: int) -> None:
    with pool.connection() as conn:
        conn.execute("UPDATE matches SET touched_at = now() WHERE id = %s", (match_id,))


def context_budget(pool: Pool, tournament_id: int, default: int = CONTEXT_BUDGET_TOKENS) -> int:
    """The retrieval context budget (tokens) the tournament was started with."""
    with pool.connection() as conn:
        row = conn.execute(
            "SELECT settings->>'context_budget_tokens' AS budget FROM tournaments WHERE id = %s",
            (tournament_id,),
        ).fetchone()
    return default if row is None or row["budget"] is None else int(row["budget"])
