"""Rating snapshots: computed leaderboards kept with the time and match count they cover."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg.types.json import Jsonb

from arena.store.pool import Pool


def store_snapshots(
    pool: Pool,
    tournament_id: int | None,
    found: Sequence[tuple[str, str, int, list[dict[str, Any]]]],
) -> None:
    with pool.connection() as conn, conn.transaction():
        for scope, value, count, rows in found:
            conn.execute(
                "INSERT INTO rating_snapshots (tournament_id, scope, scope_value, match_count,"
                " rows) VALUES (%s, %s, %s, %s, %s)",
                (tournament_id, scope, value, count, Jsonb(rows)),
            )


def latest_snapshot(
    pool: Pool, tournament_id: int | None, scope: str = "overall", value: str = ""
) -> dict[str, Any] | None:
    with pool.connection() as conn:
        return conn.execute(
            "SELECT computed_at, match_count, rows FROM rating_snapshots"
            " WHERE tournament_id IS NOT DISTINCT FROM %s AND scope = %s AND scope_value = %s"
            " ORDER BY computed_at DESC, id DESC LIMIT 1",
            (tournament_id, scope, value),
        ).fetchone()
