"""The Celery app: three queues, settings for long work that must survive dying workers."""

from __future__ import annotations

from celery import Celery

from arena.scrub import KnownSecrets
from arena.store.settings import ServiceSettings
from workers.watchdog import LoopBeat


def make_app(settings: ServiceSettings) -> Celery:
    app = Celery(
        "arena",
        broker=settings.broker_url,
        include=["workers.steps", "workers.reconciler", "workers.engine_status"],
    )
    app.conf.update(
        task_default_queue="control",
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
        arena_worker_down_s=settings.worker_down_s,  # read by LoopBeat
    )
    app.steps["consumer"].add(LoopBeat)
    return app


settings = ServiceSettings()
app = make_app(settings)
# what this worker process scrubs (arena/scrub.py): its steps' errors and its logs
secrets = KnownSecrets(settings.known_secrets())
