"""CI results cached by content in PostgreSQL: one row per request key, shared by every worker."""

from __future__ import annotations

import hashlib
import json

from psycopg.types.json import Jsonb

from arena.ci import TaskCI
from arena.store.pool import Pool
from arena.tasks.schema import Task
from ci_runner import CIRequest, CIResult, CIRunner, CIStatus
from ci_runner.images import ImageBuilder


def run_key(request: CIRequest, image_id: str, replica: int) -> str:
    """The content hash of a run: repo, commit, pipeline, image id, limits, diffs, replica."""
    keyed = {"request": request.model_dump(mode="json"), "image_id": image_id, "replica": replica}
    return hashlib.sha256(json.dumps(keyed, sort_keys=True).encode()).hexdigest()


class StoredCI(TaskCI):
    """A TaskCI whose cache is the `ci_runs` table instead of a local directory.

    A finished run is never repeated by any worker on any host. As in TaskCI, a timeout is
    re-run once and never stored (load can cause one), and infrastructure faults raise.
    """

    def __init__(self, runner: CIRunner, images: ImageBuilder, pool: Pool) -> None:
        super().__init__(runner, images, None)
        self._pool = pool

    def run(self, task: Task, diffs: tuple[str, ...], replica: int = 0) -> CIResult:
        request = self.request_for(task, diffs)
        key = run_key(request, self._images.image_id(request.image), replica)
        with self._pool.connection() as conn:
            row = conn.execute("SELECT result FROM ci_runs WHERE key = %s", (key,)).fetchone()
        if row is not None:
            return CIResult.model_validate(row["result"])
        result = self._runner.run(request)
        if result.status is CIStatus.TIMEOUT:
            result = self._runner.run(request)
        if result.status is not CIStatus.TIMEOUT:
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
        return result

    def forget(self, task: Task, diffs: tuple[str, ...], replica: int = 0) -> None:
        request = self.request_for(task, diffs)
        key = run_key(request, self._images.image_id(request.image), replica)
        with self._pool.connection() as conn:
            conn.execute("DELETE FROM ci_runs WHERE key = %s", (key,))
