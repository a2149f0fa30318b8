"""Every worker runs a reconciler thread, so recovery needs no extra process and survives kills.

Within a period only one worker's pass does the work (a conditional UPDATE per tournament).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from celery.signals import worker_ready, worker_shutdown

from workers.services import services
from workers.steps import reconcile_once

log = logging.getLogger(__name__)
_stop = threading.Event()


def _loop() -> None:
    s = services()
    while not _stop.wait(s.settings.reconcile_s / 2):
        try:
            reconcile_once(s)
        except Exception:  # the database or Redis restarting: try again next period
            log.warning("reconciler pass failed", exc_info=True)


@worker_ready.connect
def _start(**_: Any) -> None:
    threading.Thread(target=_loop, daemon=True, name="arena reconciler").start()


@worker_shutdown.connect
def _halt(**_: Any) -> None:
    _stop.set()
