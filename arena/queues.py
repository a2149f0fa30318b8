"""The contract between the service's two sides: one Celery configuration.

The API (and `arena submit`) publish through `producer`/`enqueue`; the workers consume with
the same configuration (`workers.app.make_app` adds their steps and watchdog). Neither side
imports the other: both import this, and the queue and task names of `arena.vocabulary`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from celery import Celery

from arena.store.settings import ServiceSettings
from arena.vocabulary import Queue, TaskName

log = logging.getLogger(__name__)


def celery_app(settings: ServiceSettings, include: Sequence[str] = ()) -> Celery:
    """The app both sides use: settings for long work that must survive dying workers."""
    app = Celery("arena", broker=settings.broker_url, include=list(include))
    app.conf.update(
        task_default_queue=Queue.CONTROL.value,
        task_ignore_result=True,
        # a message is acknowledged after its step, and requeued when its worker dies
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_time_limit=settings.hard_time_limit_s,
        # Redis redelivers an unacknowledged message after this: above any step's duration
        broker_transport_options={"visibility_timeout": 2 * settings.hard_time_limit_s},
        broker_connection_retry_on_startup=True,
        broker_connection_max_retries=None,
        task_publish_retry=True,
        task_publish_retry_policy={
            "max_retries": 120,
            "interval_start": 0.2,
            "interval_step": 0.5,
            "interval_max": 2.0,
        },
        worker_cancel_long_running_tasks_on_connection_loss=False,
        arena_worker_down_s=settings.worker_down_s,  # read by workers.watchdog.LoopBeat
    )
    return app


def producer(settings: ServiceSettings) -> Celery:
    """The app, publishing with a short retry: the reconciler covers a lost message."""
    app = celery_app(settings)
    app.conf.task_publish_retry_policy = {
        "max_retries": 2,
        "interval_start": 0.1,
        "interval_step": 0.2,
        "interval_max": 0.5,
    }
    return app


def enqueue(app: Celery, task: TaskName, args: tuple[int | str, ...], queue: Queue) -> bool:
    """False when the broker did not take it (the state in PostgreSQL is what counts)."""
    try:
        app.send_task(task.value, args=args, queue=queue.value)
    except Exception as exc:  # kombu's errors vary by transport
        log.warning("could not enqueue %s%s: %s", task.value, args, type(exc).__name__)
        return False
    return True
