"""The model registry: endpoint specs, metadata, prices, encrypted keys; retired, not deleted."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import psycopg
from psycopg.rows import DictRow
from psycopg.types.json import Jsonb

from arena.players.baselines import BASELINES
from arena.players.registry import spec_kind
from arena.store.pool import Pool
from arena.vocabulary import ModelKind

# columns a caller may set beside the spec (names as stored)
META_COLUMNS = (
    "organization",
    "license",
    "open_weights",
    "release_date",
    "knowledge_cutoff",
    "price_input",
    "price_output",
)
_SELECT = (
    "SELECT name, spec, api_key_enc IS NOT NULL AS has_api_key, "
    + ", ".join(META_COLUMNS)
    + ", created_at, updated_at, retired_at FROM models"
)


class DuplicateModel(ValueError):
    pass


class UnknownModel(LookupError):
    pass


@dataclass(frozen=True)
class ModelRecord:
    """A registered model as the store holds it (never its key: only whether one is kept)."""

    name: str
    spec: dict[str, Any]
    has_api_key: bool
    organization: str | None
    license: str | None
    open_weights: bool | None
    release_date: dt.date | None
    knowledge_cutoff: dt.date | None
    price_input: float | None
    price_output: float | None
    created_at: dt.datetime
    updated_at: dt.datetime
    retired_at: dt.datetime | None

    @property
    def kind(self) -> ModelKind:
        return spec_kind(self.spec)

    @classmethod
    def of(cls, row: DictRow) -> ModelRecord:
        return cls(**{f.name: row[f.name] for f in fields(cls)})


@dataclass(frozen=True)
class PlayerRecord:
    """What a worker needs to build a model's player: its spec and its sealed key, if any."""

    spec: dict[str, Any]
    api_key_enc: bytes | None


def player_record(pool: Pool, name: str) -> PlayerRecord:
    """Raises UnknownModel (a LookupError) for a name the store does not hold."""
    with pool.connection() as conn:
        row = conn.execute(
            "SELECT spec, api_key_enc FROM models WHERE name = %s", (name,)
        ).fetchone()
    if row is None:
        raise UnknownModel(f"no model {name!r} in the store")
    return PlayerRecord(spec=row["spec"], api_key_enc=row["api_key_enc"])


def ensure_baselines(pool: Pool) -> None:
    """The baselines exist from the start (oracle, partial, null)."""
    with pool.connection() as conn:
        for name in BASELINES:
            conn.execute(
                "INSERT INTO models (name, spec, organization, open_weights)"
                " VALUES (%s, %s, 'arena', true) ON CONFLICT (name) DO NOTHING",
                (name, Jsonb({"kind": ModelKind.BASELINE.value})),
            )


def insert_model(
    pool: Pool,
    name: str,
    spec: Mapping[str, Any],
    api_key_enc: bytes | None,
    meta: Mapping[str, Any],
) -> ModelRecord:
    columns = ["name", "spec", "api_key_enc", *META_COLUMNS]
    values = [name, Jsonb(dict(spec)), api_key_enc, *(meta.get(c) for c in META_COLUMNS)]
    try:
        with pool.connection() as conn:
            conn.execute(
                f"INSERT INTO models ({', '.join(columns)})"
                f" VALUES ({', '.join(['%s'] * len(columns))})",
                values,
            )
    except psycopg.errors.UniqueViolation:
        raise DuplicateModel(
            f"a model named {name!r} exists (retired ones keep their name)"
        ) from None
    return get_model(pool, name)


def list_models(pool: Pool, include_retired: bool) -> list[ModelRecord]:
    with pool.connection() as conn:
        rows = conn.execute(
            _SELECT + " WHERE %s OR retired_at IS NULL ORDER BY name", (include_retired,)
        ).fetchall()
    return [ModelRecord.of(r) for r in rows]


def get_model(pool: Pool, name: str) -> ModelRecord:
    with pool.connection() as conn:
        row = conn.execute(_SELECT + " WHERE name = %s", (name,)).fetchone()
    if row is None:
        raise UnknownModel(f"no model {name!r}")
    return ModelRecord.of(row)


def update_model(
    pool: Pool,
    name: str,
    spec: Mapping[str, Any] | None,
    changes: Mapping[str, Any],
) -> ModelRecord:
    """Set the given columns (META_COLUMNS and api_key_enc) and, if given, the spec."""
    sets = ["updated_at = now()"]
    values: list[Any] = []
    if spec is not None:
        sets.append("spec = %s")
        values.append(Jsonb(dict(spec)))
    for column, value in changes.items():
        if column not in (*META_COLUMNS, "api_key_enc"):
            raise ValueError(f"cannot set column {column!r}")
        sets.append(f"{column} = %s")
        values.append(value)
    with pool.connection() as conn:
        done = conn.execute(f"UPDATE models SET {', '.join(sets)} WHERE name = %s", [*values, name])
    if done.rowcount == 0:
        raise UnknownModel(f"no model {name!r}")
    return get_model(pool, name)


def retire_model(pool: Pool, name: str) -> ModelRecord:
    with pool.connection() as conn:
        conn.execute(
            "UPDATE models SET retired_at = coalesce(retired_at, now()) WHERE name = %s", (name,)
        )
    return get_model(pool, name)


def model_prices(pool: Pool) -> dict[str, tuple[float | None, float | None]]:
    """Per model: price per million input and output tokens (None: not priced)."""
    with pool.connection() as conn:
        rows = conn.execute("SELECT name, price_input, price_output FROM models").fetchall()
    return {r["name"]: (r["price_input"], r["price_output"]) for r in rows}
