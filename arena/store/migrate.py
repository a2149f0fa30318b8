"""Schema migrations: versioned SQL files applied in order, once, under an advisory lock."""

from __future__ import annotations

from importlib import resources

import psycopg

_LOCK_ID = 0x4152454E41  # "ARENA": one migrator at a time across every host


def migration_files() -> list[tuple[str, str]]:
    """(version, SQL) of every bundled migration, in order."""
    folder = resources.files("arena.store") / "migrations"
    found = sorted(f.name for f in folder.iterdir() if f.name.endswith(".sql"))
    return [(name.removesuffix(".sql"), (folder / name).read_text()) for name in found]


def migrate(database_url: str) -> list[str]:
    """Apply what is missing; returns the versions applied (none on a second run)."""
    applied: list[str] = []
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (_LOCK_ID,))
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            done = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
            for version, sql in migration_files():
                if version in done:
                    continue
                with conn.transaction():
                    conn.execute(sql.encode())
                    conn.execute("INSERT INTO schema_migrations (version) VALUES (%s)", (version,))
                applied.append(version)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_ID,))
    return applied
