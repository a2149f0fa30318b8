"""The ratings step's edge: read results from PostgreSQL, store the boards the engine computes.

Every number on a board comes from `arena.ratings` (the same functions `arena ratings` uses);
this module only decides which matches to read and where the boards go."""

from __future__ import annotations

from arena.ratings.scopes import CUTOFF, after_window, boards, clean_for_both, cutoff_window
from arena.ratings.scopes import snapshots as all_boards
from arena.store.pool import Pool
from arena.store.snapshots import database_now, store_snapshots
from arena.store.standings import model_dates, rated_matches


def refresh_boards(pool: Pool, tournament_id: int | None, bootstrap: int) -> None:
    """Every board of a tournament (or of all, given None), the cutoff window's included."""
    as_of = database_now(pool)
    found = all_boards(rated_matches(pool, tournament_id), bootstrap, model_dates(pool))
    store_snapshots(pool, tournament_id, found, as_of)


def refresh_window(pool: Pool, tournament_id: int | None, window: str, bootstrap: int) -> None:
    """The boards of one window asked for by the API: `cutoff` (with the current cutoffs) or
    a day (`YYYY-MM-DD`: tasks opened after it)."""
    as_of = database_now(pool)
    if window == CUTOFF:
        models = model_dates(pool)
        clean = [m for m in rated_matches(pool, tournament_id) if clean_for_both(m, models)]
        found = boards(clean, bootstrap, cutoff_window(models))
    else:
        found = boards(rated_matches(pool, tournament_id, window), bootstrap, after_window(window))
    store_snapshots(pool, tournament_id, found, as_of)
