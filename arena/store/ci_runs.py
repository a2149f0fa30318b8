"""CI results cached by content in PostgreSQL: one row per request key, shared by every worker."""

from __future__ import annotations

from psycopg.types.json import Jsonb

from arena.ci import run_key
from arena.store.pool import Pool
from ci_runner import CIRequest, CIResult

__all__ = ["StoredResults", "run_key"]


class StoredResults:
    """The `ci_runs` table as TaskCI's ResultCache (arena.ci): a finished run is never repeated
    by any worker on any host. What is kept, and when, is TaskCI's rule; this only stores."""

    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    def load(self, key: str) -> CIResult | None:
        with self._pool.connection() as conn:
            row = conn.execute("SELECT result FROM ci_runs WHERE key = %s", (key,)).fetchone()
        return None if row is None else CIResult.model_validate(row["result"])

    def keep(self, key: str, request: CIRequest, result: CIResult) -> None:
        with self._pool.connection() as conn:
            conn.execute(
                "INSERT INTO ci_runs (key, request, result, status, duration_s)"
                " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (key) DO NOTHING",
                (
                    key,
                    Jsonb(request.model_dump(mode="json")),
                    Jsonb(result.model_dump(mode="json")),
                    result.status.value,
                    result.duration_s,
                ),
            )

    def drop(self, key: str) -> None:
        with self._pool.connection() as conn:
            conn.execute("DELETE FROM ci_runs WHERE key = %s", (key,))
