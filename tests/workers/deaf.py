"""`arena` whose Celery consumer breaks in its reconnect cleanup, as celery releases have:
5.7.0 raised there (AttributeError), others froze there with the process still alive.

ARENA_TEST_CONSUMER_FAULT=raise|hang picks which, once the broker connection was lost.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

from celery.worker.consumer.consumer import Consumer

FAULT = os.environ.get("ARENA_TEST_CONSUMER_FAULT", "raise")


def _broken_cleanup(self: Any, exc: Exception) -> None:
    if FAULT == "hang":
        threading.Event().wait()
    raise AttributeError("'NoneType' object has no attribute 'on_close' (simulated)")


Consumer.on_connection_error_after_connected = _broken_cleanup  # type: ignore[method-assign]

if __name__ == "__main__":
    from cli import main

    sys.argv = ["arena", *sys.argv[1:]]
    main()
