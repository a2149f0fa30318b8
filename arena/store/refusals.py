"""Refused import lines in PostgreSQL, with the semantics of `arena.tasks.refusals`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from arena.store.pool import Pool
from arena.tasks.refusals import Refusal

_COLUMNS = "instance_id, language, repo, source_file, line, field, message, reason"


def _keepable(text: str | None) -> str | None:
    """PostgreSQL keeps no NUL and no lone surrogate: a refused line may hold both."""
    if text is None:
        return None
    return text.encode("utf-8", "replace").decode().replace("\x00", "\ufffd")


def _kept(r: Refusal) -> Refusal:
    texts = ("instance_id", "language", "repo", "source_file", "field", "message", "reason")
    return r.model_copy(update={name: _keepable(getattr(r, name)) for name in texts})


def keep_import_outcome(
    pool: Pool, refused: Sequence[Refusal], imported_ids: Iterable[str], source_file: str | None
) -> None:
    """One import's outcome: imported instances lose their refusal, the unkeyed refusals of a
    file imported again are dropped, and each refused line replaces the refusal of its key."""
    imported = list(imported_ids)
    source_file = _keepable(source_file)
    with pool.connection() as conn, conn.transaction():
        conn.execute("DELETE FROM import_refusals WHERE instance_id = ANY(%s)", (imported,))
        conn.execute(
            "DELETE FROM import_refusals WHERE instance_id IS NULL"
            " AND source_file IS NOT DISTINCT FROM %s",
            (source_file,),
        )
        for r in map(_kept, refused):
            if r.instance_id in imported:
                continue
            conn.execute(
                f"INSERT INTO import_refusals (key, {_COLUMNS})"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (key) DO UPDATE SET"
                " (instance_id, language, repo, source_file, line, field, message, reason,"
                " refused_at) = (EXCLUDED.instance_id, EXCLUDED.language, EXCLUDED.repo,"
                " EXCLUDED.source_file, EXCLUDED.line, EXCLUDED.field, EXCLUDED.message,"
                " EXCLUDED.reason, now())",
                (
                    r.key,
                    r.instance_id,
                    r.language,
                    r.repo,
                    r.source_file,
                    r.line,
                    r.field,
                    r.message,
                    r.reason,
                ),
            )


def list_refusals(pool: Pool) -> list[Refusal]:
    with pool.connection() as conn:
        rows = conn.execute(f"SELECT {_COLUMNS} FROM import_refusals ORDER BY key").fetchall()
    return [Refusal.model_validate(dict(row)) for row in rows]
