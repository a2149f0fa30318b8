"""A started sandbox kept ready for a runner's next run of the same image and limits.

Starting a locked-down container is the largest fixed cost of a warm CI run (a third of a
second and more, on the critical path even with the checkout made meanwhile). A worker or a
tournament runs the same image again and again, so the next run's sandbox is started while
the current one runs. A spare has run nothing: it is exactly what a fresh start gives, only
earlier. One not taken within IDLE_S is removed and never handed out, so a run always gets
its full time before the keep-alive ends; whatever is still held is removed when the runner
is closed or the process exits, and the labels let `arena ci sweep` remove the rest of a
process that was killed.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Generic, TypeVar

from ci_runner.background import in_background
from ci_runner.errors import SandboxError
from ci_runner.sandbox.base import Sandbox

log = logging.getLogger(__name__)

IDLE_S = 120.0  # how long a spare may wait for a run (its keep-alive is this much longer)

S = TypeVar("S", bound=Sandbox)


@dataclass
class _Spare(Generic[S]):
    started: Future[S]
    at: float  # monotonic time its start was asked for


class SpareSandboxes(Generic[S]):
    """At most one spare per key, started in the background; thread-safe."""

    def __init__(self, idle_s: float = IDLE_S) -> None:
        self._idle_s = idle_s
        self._spares: dict[Hashable, _Spare[S]] = {}
        self._lock = threading.Lock()
        self._closed = False
        self._retired: list[Future[None]] = []
        # what is still held when the runner is dropped or the process exits is removed
        self._finalizer = weakref.finalize(
            self, _close_all, self._spares, self._retired, self._lock
        )

    def take(self, key: Hashable) -> Future[S] | None:
        """The spare started for `key`, if one is young enough to give a run its whole time
        (it may still be starting: its Future says when it is up, or why it failed)."""
        with self._lock:
            spare = self._spares.pop(key, None)
        if spare is None:
            return None
        if time.monotonic() - spare.at <= self._idle_s:
            return spare.started
        self._remove_later(spare.started)
        return None

    def refill(self, key: Hashable, start: Callable[[], S]) -> None:
        """Start the next spare for `key` unless one is there already."""
        with self._lock:
            if self._closed or key in self._spares:
                return
            self._spares[key] = _Spare(in_background(start, "spare-sandbox"), time.monotonic())

    def retire(self, sandbox: S) -> None:
        """Remove a used sandbox off the run's critical path: its result is already known."""
        self._remove_later(_done(sandbox))

    def _remove_later(self, started: Future[S]) -> None:
        removal = in_background(lambda: _close(started), "sandbox-removal")
        with self._lock:
            self._retired[:] = [f for f in self._retired if not f.done()] + [removal]

    def close(self) -> None:
        """Remove every spare (waiting for those still starting), and wait for the removal
        of every retired sandbox."""
        with self._lock:
            self._closed = True
        self._finalizer()


def _done(sandbox: S) -> Future[S]:
    started: Future[S] = Future()
    started.set_result(sandbox)
    return started


def _close_all(
    spares: dict[Hashable, _Spare[S]], retired: list[Future[None]], lock: threading.Lock
) -> None:
    with lock:
        held = list(spares.values())
        spares.clear()
        removals = list(retired)
        retired.clear()
    for spare in held:
        _close(spare.started)
    for removal in removals:
        removal.result()  # _close logs its failures: this only waits


def _close(started: Future[S]) -> None:
    if started.exception() is not None:
        return  # never started: nothing to remove, and nobody asked for it
    try:
        started.result().close()
    except SandboxError as exc:
        log.warning("cannot remove a spare sandbox (arena ci sweep will): %s", exc)
