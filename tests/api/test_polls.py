"""SharedPolls on its own: followers of one key share one loop of reads, each sees a read begun
after it joined and then every change, the loop stops with its last follower, and a failed read
ends every follower (the next one starts afresh)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator

import pytest

from api.polls import SharedPolls


class Source:
    """A value read on a worker thread, counting its reads; `fail` makes the next read raise."""

    def __init__(self) -> None:
        self.value = "a"
        self.reads = 0
        self.fail = False
        self._lock = threading.Lock()

    def read(self) -> str:
        with self._lock:
            self.reads += 1
            if self.fail:
                raise RuntimeError("the store is down")
            return self.value


async def _next(updates: AsyncGenerator[str, None]) -> str:
    return await asyncio.wait_for(anext(updates), 5)


def test_followers_share_one_loop_see_each_change_and_the_loop_stops_with_the_last() -> None:
    async def scenario() -> None:
        polls: SharedPolls[int, str] = SharedPolls()
        source = Source()
        first = polls.follow(1, source.read, 0.05)
        second = polls.follow(1, source.read, 10.0)  # the eager follower sets the pace
        assert await _next(first) == "a" and await _next(second) == "a"
        assert polls.looking == 1
        source.value = "b"
        assert await _next(first) == "b" and await _next(second) == "b"
        before = source.reads
        await asyncio.sleep(0.5)
        assert 3 <= source.reads - before <= 12  # one loop at 0.05 s, not one per follower
        await first.aclose()
        await second.aclose()
        assert polls.looking == 0
        await asyncio.sleep(0.2)
        stopped = source.reads
        await asyncio.sleep(0.3)
        assert source.reads == stopped  # nobody follows: no read

    asyncio.run(scenario())


def test_a_failed_read_ends_every_follower_and_the_next_one_starts_afresh() -> None:
    async def scenario() -> None:
        polls: SharedPolls[int, str] = SharedPolls()
        source = Source()
        one, two = polls.follow(7, source.read, 0.05), polls.follow(7, source.read, 0.05)
        assert await _next(one) == "a" and await _next(two) == "a"
        source.fail = True
        for follower in (one, two):
            with pytest.raises(RuntimeError, match="the store is down"):
                await _next(follower)
        assert polls.looking == 0
        source.fail = False
        again = polls.follow(7, source.read, 0.05)
        assert await _next(again) == "a"
        await again.aclose()

    asyncio.run(scenario())
