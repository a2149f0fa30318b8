"""CI results cached by content in PostgreSQL: one row per request key, shared by every worker."""

from __future__ import annotations

from psycopg.types.json import Jsonb

from arena.ci import TaskCI, run_key
from arena.store.pool import Pool
from ci_runner import CIRequest, CIResult, CIRunner, Limits
from ci_runner.images import ImageBuilder

__all__ = ["StoredCI", "run_key"]


class StoredCI(TaskCI):
    """A TaskCI whose cache is the `ci_runs` table instead of a local directory.

    A finished run is never repeated by any worker on any host. What is kept, and when, is
    TaskCI's rule (a timeout is re-run once and never stored, infrastructure faults raise),
    and the limits are the settings' own, as on the command line (`arena.runtime.build_ci`
    builds both); only where results are kept differs.
    """

    def __init__(self, runner: CIRunner, images: ImageBuilder, pool: Pool, limits: Limits) -> None:
        super().__init__(runner, images, None, limits)
        self._pool = pool

    def _keeps_results(self) -> bool:
        return True

    def _load(self, key: str) -> CIResult | None:
        with self._pool.connection() as conn:
            row = conn.execute("SELECT result FROM ci_runs WHERE key = %s", (key,)).fetchone()
        return None if row is None else CIResult.model_validate(row["result"])

    def _keep(self, key: str, request: CIRequest, result: CIResult) -> None:
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

    def _drop(self, key: str) -> None:
        with self._pool.connection() as conn:
            conn.execute("DELETE FROM ci_runs WHERE key = %s", (key,))
