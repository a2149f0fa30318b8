"""The API in process (TestClient) on a throwaway PostgreSQL and Redis."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from api.core.config import ApiSettings
from api.main import create_app
from ci_runner import CISettings
from tests.servers import Redis
from tests.workers.conftest import broker, service_env, workers  # noqa: F401 (fixtures)

TOKEN = "admin-token-for-tests"
SECRET = "secret-key-for-tests"
ADMIN = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def api_settings(database_url: str, broker: Redis, tmp_path: Path) -> ApiSettings:  # noqa: F811
    return ApiSettings(
        database_url=database_url,
        broker_url=broker.url,
        admin_token=SecretStr(TOKEN),
        secret_key=SecretStr(SECRET),
        web_dir=tmp_path / "no-website",
        stats_ttl_s=0,  # nothing cached: each request sees what the test just stored
        board_ttl_s=0,
    )


@pytest.fixture
def client(api_settings: ApiSettings, ci_settings: CISettings) -> Iterator[TestClient]:
    with TestClient(create_app(api_settings, ci_settings)) as running:
        yield running


def demo_jsonl(cache_dir: Path, ids: list[str] | None = None) -> str:
    from arena.tasks.demo import demo_tasks

    chosen = [
        t for t in demo_tasks(cache_dir / "demo-repos") if ids is None or t.instance_id in ids
    ]
    return "".join(t.model_dump_json() + "\n" for t in chosen)
