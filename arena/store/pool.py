"""The connection pool every part of the service shares."""

from __future__ import annotations

from typing import TypeAlias

from psycopg import Connection
from psycopg.rows import DictRow, dict_row
from psycopg_pool import ConnectionPool

Pool: TypeAlias = ConnectionPool[Connection[DictRow]]


def open_pool(database_url: str, max_size: int = 8, autocommit: bool = False) -> Pool:
    """A pool that checks connections before use, so a restarted server costs one retry.

    `autocommit` saves readers the round trip of closing each transaction; writers that need
    one open it with `conn.transaction()`."""
    pool: Pool = ConnectionPool(
        database_url,
        connection_class=Connection[DictRow],
        min_size=1,
        max_size=max_size,
        kwargs={"row_factory": dict_row, "autocommit": autocommit},
        check=ConnectionPool.check_connection,
        reconnect_timeout=300,
        open=False,
    )
    pool.open(wait=True, timeout=30)
    return pool


def ping(pool: Pool, timeout_s: float = 2.0) -> None:
    """Raises (psycopg's or the pool's error) when PostgreSQL does not answer in time."""
    with pool.connection(timeout=timeout_s) as conn:
        conn.execute("SELECT 1")
