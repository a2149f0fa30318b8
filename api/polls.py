"""Shared looks: every stream that follows one thing (a tournament's progress) is fed by one loop
that reads it, so the store's load grows with what is followed, not with how many follow it.

A read runs on a worker thread and holds a database connection only while it runs; between
reads nothing is held. The loop looks as often as its most eager follower asks, and stops
when the last one leaves."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncGenerator, Callable, Hashable
from typing import Generic, TypeVar, cast

from fastapi.concurrency import run_in_threadpool

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class SharedPolls(Generic[K, V]):
    """One loop of reads per key followed, however many follow it (one event loop: no lock)."""

    def __init__(self) -> None:
        self._loops: dict[K, _Loop[V]] = {}

    @property
    def looking(self) -> int:
        """How many things are being looked at now."""
        return len(self._loops)

    async def follow(
        self, key: K, read: Callable[[], V], every_s: float
    ) -> AsyncGenerator[V, None]:
        """The value of `read()` from the first read that began after this call, then each
        change. The loop of `key` reads at least every `every_s` while this follows it; an
        error of a read ends every follower with it."""
        loop = self._loops.get(key)
        if loop is None or loop.ended:
            loop = self._loops[key] = _Loop(read, lambda ended: self._forget(key, ended))
        joined = loop.join(every_s)
        try:
            last: object = _NOTHING
            while True:
                if loop.error is not None:
                    raise loop.error
                if loop.read_started > joined and loop.value is not last:
                    last = loop.value
                    yield cast(V, loop.value)  # a read has set it
                    continue  # what happened while the consumer was away counts too
                await loop.news()
        finally:
            loop.leave(every_s)

    def _forget(self, key: K, ended: _Loop[V]) -> None:
        if self._loops.get(key) is ended:
            del self._loops[key]


_NOTHING = object()


class _Loop(Generic[V]):
    """One thing's reads: the latest value, and an event for those waiting on the next one."""

    def __init__(self, read: Callable[[], V], forget: Callable[[_Loop[V]], None]) -> None:
        self._read = read
        self._forget = forget
        self._every: Counter[float] = Counter()
        self._wake = asyncio.Event()
        self._news = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.value: V | None = None
        self.error: BaseException | None = None
        self.read_started = 0  # of the read whose result `value` is (0: none yet)
        self._reads = 0
        self.ended = False

    def join(self, every_s: float) -> int:
        """Count a follower in and wake the loop for a fresh read; the reads begun so far."""
        self._every[every_s] += 1
        self._wake.set()
        if self._task is None:
            self._task = asyncio.create_task(self._run())
        return self._reads

    def leave(self, every_s: float) -> None:
        self._every[every_s] -= 1
        if self._every[every_s] <= 0:
            del self._every[every_s]
        if not self._every and not self.ended:
            self._end()
            if self._task is not None:
                self._task.cancel()

    async def news(self) -> None:
        await self._news.wait()

    def _announce(self) -> None:
        self._news.set()
        self._news = asyncio.Event()

    def _end(self) -> None:
        self.ended = True
        self._forget(self)

    async def _run(self) -> None:
        try:
            while self._every:
                self._wake.clear()
                self._reads += 1
                started = self._reads
                value = await run_in_threadpool(self._read)
                if self.read_started == 0 or value != self.value:
                    self.value = value  # an equal value keeps the object followers last saw
                self.read_started = started
                self._announce()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), min(self._every, default=0.0))
        except Exception as exc:
            self.error = exc
            self._end()
            self._announce()
