"""A time-to-live cache for aggregates many readers ask for at once.

An expired value is still served while one background thread refreshes it, so a slow
aggregate never stalls a burst of readers (only the very first read of a key waits)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")
log = logging.getLogger(__name__)


class TtlCache(Generic[V]):
    def __init__(self, ttl_s: float, max_entries: int = 256) -> None:
        self._ttl = ttl_s
        self._max = max_entries
        self._lock = threading.Lock()
        self._entries: dict[Hashable, tuple[float, V]] = {}
        self._refreshing: set[Hashable] = set()

    def get(self, key: Hashable, compute: Callable[[], V]) -> V:
        """The cached value (a stale one is served while it is refreshed), else computed now."""
        found = self.cached(key, compute)
        if found is not None:
            return found[0]
        value = compute()
        self._store(key, value)
        return value

    def cached(self, key: Hashable, compute: Callable[[], V]) -> tuple[V] | None:
        """The value if one is held (a refresh starts when it is stale), without computing on
        a miss: an async route serves hits on its event loop and computes misses elsewhere.
        A time-to-live of 0 holds nothing (always a miss)."""
        if self._ttl <= 0:
            return None
        with self._lock:
            hit = self._entries.get(key)
            stale = hit is not None and time.monotonic() - hit[0] >= self._ttl
            if stale and key not in self._refreshing:
                self._refreshing.add(key)
                threading.Thread(
                    target=self._refresh, args=(key, compute), daemon=True, name="cache refresh"
                ).start()
        return None if hit is None else (hit[1],)

    def _store(self, key: Hashable, value: V) -> None:
        if self._ttl <= 0:
            return
        with self._lock:
            if len(self._entries) >= self._max and key not in self._entries:
                self._entries.clear()
            self._entries[key] = (time.monotonic(), value)

    def _refresh(self, key: Hashable, compute: Callable[[], V]) -> None:
        try:
            self._store(key, compute())
        except Exception:  # the store restarting: the stale value stays until the next try
            log.warning("refreshing a cached aggregate failed", exc_info=True)
        finally:
            with self._lock:
                self._refreshing.discard(key)
