"""The Celery app: three queues, settings for long work that must survive dying workers."""

from __future__ import annotations

from celery import Celery

from arena.queues import celery_app
from arena.scrub import KnownSecrets
from arena.store.settings import ServiceSettings
from workers.watchdog import LoopBeat


def make_app(settings: ServiceSettings) -> Celery:
    """The shared app (arena.queues) with the workers' steps and their event-loop watchdog."""
    app = celery_app(
        settings, include=["workers.steps", "workers.reconciler", "workers.engine_status"]
    )
    app.steps["consumer"].add(LoopBeat)
    return app


settings = ServiceSettings()
app = make_app(settings)
# what this worker process scrubs (arena/scrub.py): its steps' errors and its logs
secrets = KnownSecrets(settings.known_secrets())
