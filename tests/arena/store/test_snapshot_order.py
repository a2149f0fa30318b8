"""The latest board is the one computed from the newest matches, not the one stored last: a
slow ratings step that read 5 matches and ends after the one that read 6 never wins."""

from __future__ import annotations

import datetime as dt

from arena.ratings.board import build_board
from arena.ratings.records import MatchResult
from arena.ratings.scopes import Scope, ScopedBoard
from arena.store.pool import Pool
from arena.store.snapshots import database_now, latest_snapshot, store_snapshots


def _board(n: int) -> list[ScopedBoard]:
    matches = [MatchResult(f"t{i}", "x", "y", "a" if i % 2 else "b") for i in range(n)]
    return [ScopedBoard(Scope(), build_board(matches, bootstrap=20))]


def test_a_board_from_older_matches_stored_later_is_not_the_latest(pool: Pool) -> None:
    read_early = database_now(pool)  # the slow step read its matches first
    read_late = read_early + dt.timedelta(milliseconds=50)
    store_snapshots(pool, None, _board(6), read_late)  # the quick one, from 6 matches
    store_snapshots(pool, None, _board(5), read_early)  # the slow one ends after it
    latest = latest_snapshot(pool, None)
    assert latest is not None and latest.match_count == 6
    assert latest.computed_at == read_late
