"""A worker that can no longer take work exits non-zero, so its supervisor restarts it.

Celery retries a lost broker connection forever, and some of its failures leave the process
alive but deaf: a consumer that died in its reconnect cleanup (celery 5.7.0), or an event
loop that froze after a reconnect. From outside all of these look like a running worker.
So the consumer's event loop beats a clock (a timer re-registered each time the consumer
(re)connects, since a reconnect clears the loop's timers), and a thread started with the
process ends it when the clock has stood still for `down_s`: short broker outages are left
to Celery's own reconnect, a lasting one or a dead loop end in a restart.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from celery import bootsteps

log = logging.getLogger(__name__)

EXIT_CONSUMER_DOWN = 75  # EX_TEMPFAIL: try again (systemd Restart=on-failure, compose restart)


class LoopClock:
    """When the consumer's event loop last ran; thread-safe enough (one float, one writer)."""

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self._now = now
        self._last = now()
        self.blind = False  # no event loop to watch (a broker transport without one)

    def beat(self) -> None:
        self._last = self._now()

    def silent_for(self) -> float:
        return 0.0 if self.blind else self._now() - self._last


clock = LoopClock()


def beat_period(down_s: float) -> float:
    """Several beats per allowed silence, so a slow loop on a busy machine is not taken for dead."""
    return max(0.2, min(5.0, down_s / 6))


class LoopBeat(bootsteps.StartStopStep):  # type: ignore[misc]  # celery is untyped
    """A consumer step: Celery calls `register_with_event_loop` on every (re)connect."""

    def start(self, c: Any) -> None:
        if c.hub is None and not clock.blind:  # a blocking loop: nothing would ever beat
            log.warning("the consumer has no event loop to watch: no watchdog")
            clock.blind = True

    def register_with_event_loop(self, c: Any, hub: Any) -> None:
        clock.beat()
        hub.call_repeatedly(beat_period(c.app.conf.arena_worker_down_s), clock.beat)


def watch(
    down_s: float, exit: Callable[[int], None] = os._exit, loop: LoopClock = clock
) -> threading.Thread:
    """Start the thread that ends the process once the loop has been silent for `down_s`
    (counted from now: the first connection may take as long as a reconnect).

    The exit is immediate (no warm shutdown: a stuck consumer may never finish one); steps
    running then are retaken like those of a killed worker, once their leases run out.
    """
    loop.beat()

    def run() -> None:
        period = beat_period(down_s)
        while True:
            time.sleep(period)
            silent = loop.silent_for()
            if silent > down_s:
                log.critical(
                    "the worker's consumer has not run for %.0f s (broker lost or consumer "
                    "dead): exiting with %d so that it is restarted",
                    silent,
                    EXIT_CONSUMER_DOWN,
                )
                for handler in logging.getLogger().handlers:
                    handler.flush()
                exit(EXIT_CONSUMER_DOWN)
                return

    thread = threading.Thread(target=run, daemon=True, name="arena watchdog")
    thread.start()
    return thread
