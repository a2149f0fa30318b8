"""An adaptive tournament whose scheduling message was lost is scheduled by the reconciler,
which keeps deciding again every period without passing the bound on matches in flight."""

from __future__ import annotations

import time

from arena.store.pool import open_pool
from arena.store.tournaments import create_tournament
from tests.arena.store.test_adaptive import BASELINE, _open_matches, _task
from tests.workers.conftest import Workers


def test_the_reconciler_schedules_an_adaptive_tournament_whose_message_was_lost(
    service_env: dict[str, str], workers: Workers
) -> None:
    url = service_env["ARENA_DATABASE_URL"]
    pool = open_pool(url)
    try:
        config = {"goal": {"separate": True}, "budget": {}, "in_flight": 3}
        models = dict.fromkeys(("oracle", "partial", "null"), BASELINE)
        tournament = create_tournament(pool, models, [_task(n) for n in range(5)], "t", {}, config)
        # no schedule message was ever sent; only a control worker runs: nothing is played
        workers.start("control", 2)
        deadline = time.monotonic() + 60
        while not _open_matches(pool, tournament):
            assert time.monotonic() < deadline, "the reconciler never scheduled it"
            time.sleep(0.5)
        time.sleep(8)  # several reconciler periods (ARENA_RECONCILE_S=2) decide again
        opened = _open_matches(pool, tournament)
        assert len(opened) == 3
        keys = {tuple(sorted((a, b))) for _, a, b in opened}
        assert len(keys) == 3  # spread over the three pairs while nothing has been learnt
    finally:
        pool.close()
