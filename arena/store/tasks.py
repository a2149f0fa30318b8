"""The task library: tasks stored by instance id and fingerprint, found by filters."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from psycopg.rows import DictRow
from psycopg.types.json import Jsonb

from arena.store.pool import Pool
from arena.tasks.schema import Task

# the newest version of each instance id
_LATEST = (
    "SELECT DISTINCT ON (instance_id) id, instance_id, fingerprint, language, kind,"
    " issue_created_at, task, validation, validated_at, imported_at FROM tasks"
)


@dataclass(frozen=True)
class TaskFilter:
    language: str | None = None
    kind: str | None = None
    validity: str | None = None  # valid, invalid or unvalidated
    repo: str | None = None

    def where(self) -> tuple[str, dict[str, Any]]:
        clauses = ["TRUE"]
        if self.language is not None:
            clauses.append("language = %(language)s")
        if self.kind is not None:
            clauses.append("kind = %(kind)s")
        if self.validity == "valid":
            clauses.append("(validation->>'valid')::boolean")
        elif self.validity == "invalid":
            clauses.append("NOT (validation->>'valid')::boolean")
        elif self.validity == "unvalidated":
            clauses.append("validation IS NULL")
        if self.repo is not None:
            clauses.append("task->>'repo' ILIKE %(repo)s")
        params = {
            "language": self.language,
            "kind": self.kind,
            "repo": None if self.repo is None else f"%{self.repo}%",
        }
        return " AND ".join(clauses), params


@dataclass(frozen=True)
class StoredTask:
    id: int
    instance_id: str
    new: bool


def upsert_tasks(pool: Pool, tasks: Sequence[Task]) -> list[StoredTask]:
    """A changed task (another fingerprint) is a new version; the same one is kept as it was."""
    stored = []
    with pool.connection() as conn, conn.transaction():
        for task in tasks:
            row = conn.execute(
                "INSERT INTO tasks (instance_id, fingerprint, language, task)"
                " VALUES (%s, %s, %s, %s) ON CONFLICT (instance_id, fingerprint)"
                " DO UPDATE SET instance_id = EXCLUDED.instance_id"
                " RETURNING id, (xmax = 0) AS new",
                (
                    task.instance_id,
                    task.fingerprint(),
                    task.language.value,
                    Jsonb(task.model_dump(mode="json")),
                ),
            ).fetchone()
            assert row is not None
            stored.append(StoredTask(int(row["id"]), task.instance_id, bool(row["new"])))
    return stored


def list_tasks(pool: Pool, found: TaskFilter, limit: int, offset: int) -> tuple[list[DictRow], int]:
    where, params = found.where()
    latest = f"SELECT * FROM ({_LATEST} ORDER BY instance_id, id DESC) AS latest WHERE {where}"
    with pool.connection() as conn:
        rows = conn.execute(
            f"{latest} ORDER BY instance_id LIMIT %(limit)s OFFSET %(offset)s",
            {**params, "limit": limit, "offset": offset},
        ).fetchall()
        total = conn.execute(f"SELECT count(*) AS n FROM ({latest}) AS t", params).fetchone()
    assert total is not None
    return rows, int(total["n"])


def get_task(pool: Pool, instance_id: str) -> DictRow | None:
    with pool.connection() as conn:
        return conn.execute(
            _LATEST + " WHERE instance_id = %s ORDER BY instance_id, id DESC", (instance_id,)
        ).fetchone()


def tasks_by_ids(pool: Pool, instance_ids: Sequence[str]) -> tuple[list[Task], list[str]]:
    """The newest version of each; and the ids that are not in the library."""
    with pool.connection() as conn:
        rows = conn.execute(
            _LATEST + " WHERE instance_id = ANY(%s) ORDER BY instance_id, id DESC",
            (list(instance_ids),),
        ).fetchall()
    found = {r["instance_id"]: r for r in rows}
    missing = [i for i in instance_ids if i not in found]
    return [_task(found[i]) for i in instance_ids if i in found], missing


def tasks_matching(pool: Pool, found: TaskFilter) -> list[Task]:
    where, params = found.where()
    with pool.connection() as conn:
        rows = conn.execute(
            f"SELECT * FROM ({_LATEST} ORDER BY instance_id, id DESC) AS latest"
            f" WHERE {where} ORDER BY instance_id",
            params,
        ).fetchall()
    return [_task(r) for r in rows]


def _task(row: DictRow) -> Task:
    return Task.model_validate({**row["task"], "validation": row["validation"]})
