"""The FastAPI app: JSON under /api, OpenAPI at /api/openapi.json, the website at /."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.routing import APIRoute

from api import errors, metrics
from api.cache import TtlCache
from api.core.config import ApiSettings
from api.deps import Services
from api.endpoint_check import EndpointChecks
from api.polls import SharedPolls
from api.routes import health, leaderboard, matches, models, tasks, tournaments
from api.streams import Streams
from api.website import Website
from arena.queues import producer
from arena.scrub import KnownSecrets, scrubbed_logs
from arena.store.models import ensure_baselines
from arena.store.pool import open_pool
from arena.store.secrets import key_box
from ci_runner import CISettings

OPENAPI_URL = "/api/openapi.json"


def _operation_id(route: APIRoute) -> str:
    """Each route names its own operation id: clients get methods like `list_models`."""
    return route.name


def include_api(app: FastAPI) -> None:
    """Each module's routes straight under /api: FastAPI rebuilds every route at each level
    of inclusion, and an extra /api router doubled it (measured: building an app and
    serving its first request, 229 ms of CPU through that router, 100 ms without)."""
    for module in (health, models, tasks, tournaments, matches, leaderboard):
        app.include_router(module.router, prefix="/api")


def create_app(
    settings: ApiSettings | None = None, ci_settings: CISettings | None = None
) -> FastAPI:
    """Settings are read once here (or given) and passed to every request through deps."""
    settings = settings or ApiSettings()
    ci_settings = ci_settings or CISettings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        pool = open_pool(settings.database_url, max_size=12, autocommit=True)
        ensure_baselines(pool)
        secret = settings.secret_key.get_secret_value() if settings.secret_key else None
        secrets = KnownSecrets(settings.known_secrets())
        key_env = settings.key_env_rule()
        app.state.services = Services(
            settings=settings,
            ci_settings=ci_settings,
            pool=pool,
            queue=producer(settings),
            keys=key_box(secret),
            key_env=key_env,
            secrets=secrets,
            model_cache=TtlCache(settings.stats_ttl_s),
            matrix_cache=TtlCache(settings.stats_ttl_s),
            refresh_requests=TtlCache(settings.stats_ttl_s),
            board_cache=TtlCache(settings.board_ttl_s),
            checks=EndpointChecks(settings.check_concurrency, key_env, os.environ, secrets),
            streams=Streams(settings),
            progress_polls=SharedPolls(),
        )
        try:
            with scrubbed_logs(secrets):
                yield
        finally:
            pool.close()

    app = FastAPI(
        title="Arena",
        summary="Code LLMs compete on real GitHub issues (SwingArena protocol).",
        version="1",
        openapi_url=OPENAPI_URL,
        docs_url="/api/docs",
        redoc_url=None,
        lifespan=lifespan,
        generate_unique_id_function=_operation_id,
    )
    errors.install(app)
    include_api(app)
    app.include_router(metrics.router)  # /metrics, beside /api and not in its schema
    if settings.web_dir.is_dir():
        app.mount("/", Website(directory=settings.web_dir, html=True), name="web")
    return app
