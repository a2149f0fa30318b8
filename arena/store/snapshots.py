"""Rating snapshots: computed leaderboards kept with the time and match count they cover.

Each is found by tournament (NULL: all), scope and scope value; the latest one counts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg.types.json import Jsonb

from arena.store.pool import Pool

BOARD = "board"  # the scope every board is stored under; its value says its filters
ALL = "*"


def board_key(language: str | None, kind: str | None, window: str | None) -> str:
    """The stored scope value of a board: `language|kind|window`, `*` for all."""
    return "|".join(v or ALL for v in (language, kind, window))


OVERALL = board_key(None, None, None)


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
    pool: Pool, tournament_id: int | None, scope: str = BOARD, value: str = OVERALL
) -> dict[str, Any] | None:
    with pool.connection() as conn:
        return conn.execute(
            "SELECT computed_at, match_count, rows FROM rating_snapshots"
            " WHERE tournament_id IS NOT DISTINCT FROM %s AND scope = %s AND scope_value = %s"
            " ORDER BY computed_at DESC, id DESC LIMIT 1",
            (tournament_id, scope, value),
        ).fetchone()


def latest_snapshot_like(
    pool: Pool, tournament_id: int | None, scope: str, prefix: str
) -> dict[str, Any] | None:
    """The newest snapshot whose scope value starts with `prefix` (e.g. a window computed
    with other knowledge cutoffs, shown while the current one is computed)."""
    pattern = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    with pool.connection() as conn:
        return conn.execute(
            "SELECT computed_at, match_count, rows FROM rating_snapshots"
            " WHERE tournament_id IS NOT DISTINCT FROM %s AND scope = %s AND scope_value LIKE %s"
            " ORDER BY computed_at DESC, id DESC LIMIT 1",
            (tournament_id, scope, pattern),
        ).fetchone()
