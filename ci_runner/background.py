"""Engine calls started on a thread of their own while the caller goes on (a sandbox started
while the checkout is made, a cache layer's keeper while the sandbox is created)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

T = TypeVar("T")


def in_background(work: Callable[[], T], name: str) -> Future[T]:
    """`work` running on a daemon thread (an orphaned engine call never holds the process
    at exit); its Future gives its result, or raises its error, where it is waited for."""
    future: Future[T] = Future()

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(work())
        except BaseException as exc:  # raised by result(), in the thread that waits
            future.set_exception(exc)

    threading.Thread(target=run, name=name, daemon=True).start()
    return future
