"""A throwaway PostgreSQL server for the session, a fresh database for each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.store.servers import Postgres, postgres_server


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    with postgres_server() as server:
        yield server


@pytest.fixture
def database_url(postgres: Postgres) -> str:
    return postgres.new_database()
