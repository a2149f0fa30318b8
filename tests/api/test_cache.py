"""The aggregate cache: fresh values are reused, stale ones served while one refresh runs."""

from __future__ import annotations

import threading
import time

from api.cache import TtlCache


def test_a_stale_value_is_served_while_a_single_refresh_runs() -> None:
    cache: TtlCache[int] = TtlCache(ttl_s=0.05)
    calls: list[int] = []
    release = threading.Event()

    def slow() -> int:
        calls.append(1)
        if len(calls) > 1:
            release.wait(5)
        return len(calls)

    assert cache.get("k", slow) == 1
    assert cache.get("k", slow) == 1 and len(calls) == 1  # fresh: not recomputed
    time.sleep(0.06)
    started = time.monotonic()
    assert [cache.get("k", slow) for _ in range(20)] == [1] * 20  # stale, served at once
    assert time.monotonic() - started < 1.0
    release.set()
    deadline = time.monotonic() + 5
    while cache.get("k", slow) != 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert cache.get("k", slow) == 2 and len(calls) == 2  # one refresh for the whole burst


def test_a_time_to_live_of_zero_holds_nothing() -> None:
    cache: TtlCache[int] = TtlCache(ttl_s=0)
    calls: list[int] = []

    def count() -> int:
        calls.append(1)
        return len(calls)

    assert [cache.get("k", count) for _ in range(3)] == [1, 2, 3]
    assert cache.cached("k", count) is None
