"""Rating snapshots: computed boards kept with the time and match count they cover.

Each is found by tournament (NULL: all), scope and scope value; the latest one counts. Rows
are stored as the engine's `BoardRow`s with a layout version, and read back as `BoardRow`s:
a row of an older layout is upgraded field by field (each missing field given its defined
value), never handed on half-read. A new column with a default needs no new version."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from psycopg.types.json import Jsonb

from arena.ratings.board import BoardRow, is_provisional
from arena.ratings.rates import share
from arena.ratings.scopes import Scope, ScopedBoard
from arena.store.pool import Pool

BOARD = "board"  # the scope every board is stored under; its value says its filters
ALL = "*"
ROW_LAYOUT = 2  # 1: rows before the engine's BoardRow (rates as raw counts under `facts`)


def board_key(language: str | None, kind: str | None, window: str | None) -> str:
    """The stored scope value of a board: `language|kind|window`, `*` for all."""
    return "|".join(v or ALL for v in (language, kind, window))


def scope_key(scope: Scope) -> str:
    return board_key(scope.language, scope.kind, scope.window)


OVERALL = board_key(None, None, None)


@dataclass(frozen=True)
class StoredBoard:
    computed_at: dt.datetime
    match_count: int
    rows: tuple[BoardRow, ...]


def database_now(pool: Pool) -> dt.datetime:
    """The database's clock: the one time every worker host agrees on."""
    with pool.connection() as conn:
        row = conn.execute("SELECT now() AS now").fetchone()
    assert row is not None and isinstance(row["now"], dt.datetime)
    return row["now"]


def store_snapshots(
    pool: Pool, tournament_id: int | None, found: Sequence[ScopedBoard], as_of: dt.datetime
) -> None:
    """Boards computed from the matches read at `as_of` (`database_now` before reading),
    stored as of then: a slow computation from older matches that ends after a newer one
    never becomes the latest."""
    with pool.connection() as conn, conn.transaction():
        for scoped in found:
            rows = [{**r.model_dump(mode="json"), "v": ROW_LAYOUT} for r in scoped.board.rows]
            conn.execute(
                "INSERT INTO rating_snapshots (tournament_id, scope, scope_value, match_count,"
                " rows, computed_at) VALUES (%s, %s, %s, %s, %s, %s)",
                (tournament_id, BOARD, scope_key(scoped.scope), scoped.board.match_count,
                 Jsonb(rows), as_of),
            )  # fmt: skip


def latest_snapshot(
    pool: Pool, tournament_id: int | None, scope: str = BOARD, value: str = OVERALL
) -> StoredBoard | None:
    with pool.connection() as conn:
        found = conn.execute(
            "SELECT computed_at, match_count, rows FROM rating_snapshots"
            " WHERE tournament_id IS NOT DISTINCT FROM %s AND scope = %s AND scope_value = %s"
            " ORDER BY computed_at DESC, id DESC LIMIT 1",
            (tournament_id, scope, value),
        ).fetchone()
    return None if found is None else _stored(found)


def latest_snapshot_like(
    pool: Pool, tournament_id: int | None, scope: str, prefix: str
) -> StoredBoard | None:
    """The newest snapshot whose scope value starts with `prefix` (e.g. a window computed
    with other knowledge cutoffs, shown while the current one is computed)."""
    pattern = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    with pool.connection() as conn:
        found = conn.execute(
            "SELECT computed_at, match_count, rows FROM rating_snapshots"
            " WHERE tournament_id IS NOT DISTINCT FROM %s AND scope = %s AND scope_value LIKE %s"
            " ORDER BY computed_at DESC, id DESC LIMIT 1",
            (tournament_id, scope, pattern),
        ).fetchone()
    return None if found is None else _stored(found)


def _stored(found: dict[str, Any]) -> StoredBoard:
    return StoredBoard(
        found["computed_at"], found["match_count"], tuple(read_row(r) for r in found["rows"])
    )


def read_row(stored: dict[str, Any]) -> BoardRow:
    """A stored row as a `BoardRow`, whatever layout it was written in."""
    if stored.get("v", 1) == 1:
        stored = _from_layout_1(stored)
    return BoardRow.model_validate({k: v for k, v in stored.items() if k != "v"})


def _from_layout_1(row: dict[str, Any]) -> dict[str, Any]:
    """Layout 1 kept each rate's counts under `facts` and no draws: rates are computed from
    those counts as the engine does (null without chances); draws were not recorded, so the
    draw rate is null ("not known") over `rounds` = rounds submitted + rounds reviewed;
    `provisional` follows from the match count."""
    facts = row.get("facts") or {}
    submitted, reviewed = facts.get("submitted", 0), facts.get("reviewed", 0)
    upgraded = {k: v for k, v in row.items() if k != "facts"}
    upgraded.update(
        provisional=is_provisional(row.get("matches") or 0),
        patch_correct=share(facts.get("correct", 0), submitted),
        rounds_submitted=submitted,
        tests_valid=share(facts.get("valid", 0), reviewed),
        rounds_reviewed=reviewed,
        catch=share(facts.get("caught", 0), facts.get("wrong_patches", 0)),
        wrong_patches_reviewed=facts.get("wrong_patches", 0),
        draw=None,
        rounds=submitted + reviewed,
    )
    return upgraded
