"""A small time-to-live cache for aggregates that many readers ask for at once."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class TtlCache(Generic[V]):
    def __init__(self, ttl_s: float, max_entries: int = 256) -> None:
        self._ttl = ttl_s
        self._max = max_entries
        self._lock = threading.Lock()
        self._entries: dict[Hashable, tuple[float, V]] = {}

    def get(self, key: Hashable, compute: Callable[[], V]) -> V:
        now = time.monotonic()
        with self._lock:
            hit = self._entries.get(key)
        if hit is not None and now - hit[0] < self._ttl:
            return hit[1]
        value = compute()
        with self._lock:
            if len(self._entries) >= self._max:
                self._entries.clear()
            self._entries[key] = (now, value)
        return value
