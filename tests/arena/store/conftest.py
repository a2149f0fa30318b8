"""A migrated store for the modules that use one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from arena.store.pool import Pool, open_pool


@pytest.fixture
def pool(database_url: str) -> Iterator[Pool]:
    opened = open_pool(database_url)
    try:
        yield opened
    finally:
        opened.close()
