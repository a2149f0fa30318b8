"""The connection pool every part of the service shares."""

from __future__ import annotations

from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool


def open_pool(database_url: str, max_size: int = 8) -> ConnectionPool:
    """A pool that checks connections before use, so a restarted server costs one retry."""
    pool = ConnectionPool(
        database_url,
        min_size=1,
        max_size=max_size,
        kwargs={"row_factory": dict_row},
        check=ConnectionPool.check_connection,
        reconnect_timeout=300,
        open=False,
    )
    pool.open(wait=True, timeout=30)
    return pool
