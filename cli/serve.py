"""`arena serve`: the API (uvicorn), after migrating the store."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.exits import BAD_INPUT, INFRASTRUCTURE, fail


def serve(
    host: Annotated[str, typer.Option("--host", help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535)] = 8000,
    demo: Annotated[
        bool, typer.Option("--demo", help="a local demo: no admin token or secret key needed")
    ] = False,
) -> None:
    """Serve the JSON API under /api (and the website at / when ARENA_WEB_DIR holds it)."""
    from api.core.config import ApiSettings, InsecureSettings

    settings = ApiSettings()
    if demo:
        settings = settings.model_copy(update={"demo": True})
    try:
        settings.check_secure()
    except InsecureSettings as exc:
        fail(BAD_INPUT, f"refusing to start: {exc}")
    # the server itself is imported once the settings are known good: a refusal is immediate
    import psycopg
    import uvicorn

    from api.main import create_app
    from arena.store.migrate import migrate

    try:
        migrate(settings.database_url)
    except psycopg.OperationalError as exc:
        fail(INFRASTRUCTURE, f"cannot reach PostgreSQL at ARENA_DATABASE_URL: {exc}")
    from arena.tasks.demo import commit_demo_repos
    from ci_runner import CISettings

    commit_demo_repos(CISettings().cache_dir)  # imports check that a task's repo can be fetched
    uvicorn.run(create_app(settings), host=host, port=port, log_level="info")
