"""Sending work to the Celery workers without waiting long on a broker that is down."""

from __future__ import annotations

import logging

from celery import Celery

from arena.store.settings import ServiceSettings

log = logging.getLogger(__name__)


def producer(settings: ServiceSettings) -> Celery:
    """The workers' app, publishing with a short retry: the reconciler covers a lost message."""
    from workers.app import make_app

    app = make_app(settings)
    app.conf.task_publish_retry_policy = {
        "max_retries": 2,
        "interval_start": 0.1,
        "interval_step": 0.2,
        "interval_max": 0.5,
    }
    return app


def enqueue(app: Celery, name: str, args: tuple[int | str, ...], queue: str) -> bool:
    """False when the broker did not take it (the state in PostgreSQL is what counts)."""
    try:
        app.send_task(name, args=args, queue=queue)
    except Exception as exc:  # kombu's errors vary by transport
        log.warning("could not enqueue %s%s: %s", name, args, type(exc).__name__)
        return False
    return True
