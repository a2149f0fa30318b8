"""/api/models: register, list, read, change and retire models."""

from __future__ import annotations

from typing import Annotated, Any

import httpx
from fastapi import APIRouter, Path, Query, status
from starlette.concurrency import run_in_threadpool

from api.deps import Admin, PoolDep, Services, ServicesDep
from api.endpoint_check import origin
from api.errors import ApiError, not_found
from api.schemas.common import error_responses
from api.schemas.models import NAME, ModelCreate, ModelList, ModelOut, ModelUpdate
from arena.players.key_env import KeyEnvRefused
from arena.players.registry import spec_kind
from arena.store import models as store
from arena.vocabulary import ModelKind

router = APIRouter(prefix="/models", tags=["models"])

_SPEC_FIELDS = ("base_url", "model", "api_key_env", "temperature", "max_tokens", "timeout_s",
                "max_concurrency")  # fmt: skip
_PRICES = {"price_input_per_mtok": "price_input", "price_output_per_mtok": "price_output"}
NamePath = Annotated[str, Path(pattern=NAME, description="the model's name")]


def model_out(row: store.ModelRecord) -> ModelOut:
    spec = row.spec
    return ModelOut(
        name=row.name,
        kind=row.kind,
        base_url=spec.get("base_url"),
        model=spec.get("model"),
        has_api_key=row.has_api_key,
        api_key_env=spec.get("api_key_env"),
        temperature=spec.get("temperature"),
        max_tokens=spec.get("max_tokens"),
        timeout_s=spec.get("timeout_s"),
        max_concurrency=spec.get("max_concurrency"),
        organization=row.organization,
        license=row.license,
        open_weights=row.open_weights,
        release_date=row.release_date,
        knowledge_cutoff=row.knowledge_cutoff,
        price_input_per_mtok=row.price_input,
        price_output_per_mtok=row.price_output,
        retired=row.retired_at is not None,
        retired_at=row.retired_at,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _meta(fields: dict[str, Any]) -> dict[str, Any]:
    return {
        _PRICES.get(k, k): v for k, v in fields.items() if _PRICES.get(k, k) in store.META_COLUMNS
    }


def _seal(s: ServicesDep, api_key: str) -> bytes:
    if s.keys is None:
        raise ApiError(
            422,
            ["body", "api_key"],
            "ARENA_SECRET_KEY is not set, so no API key can be stored: use api_key_env",
        )
    s.secrets.add(api_key)  # from now on scrubbed from this process's logs
    return s.keys.seal(api_key)


def _allowed_key_env(s: Services, name: str) -> None:
    """Only a model key's variable may be named (ARENA_MODEL_KEY_PREFIX, ARENA_MODEL_KEY_ENVS):
    the key is sent to base_url, which whoever registers the model chooses. The refusal states
    the rule and never whether the variable exists."""
    try:
        s.key_env.check(name)
    except KeyEnvRefused as exc:
        raise ApiError(422, ["body", "api_key_env"], str(exc)) from None


def _origin(url: str | None) -> str | None:
    """`scheme://host:port` of a URL; None when there is none to tell (no URL, not usable)."""
    try:
        return None if url is None else origin(url)
    except httpx.InvalidURL:
        return None


def _refuse_moving_the_key(name: str, row: store.ModelRecord, given: dict[str, Any]) -> None:
    """A PATCH that moves base_url to another scheme, host or port must give the key again
    (api_key, or api_key_env, or remove it): a key given for one host is never sent to another
    on the strength of the admin token alone."""
    new = given.get("base_url")
    if new is None:
        return
    where = _origin(new)
    if where is not None and where == _origin(row.spec.get("base_url")):
        return
    keeps_stored = row.has_api_key and "api_key" not in given and not given.get("api_key_env")
    keeps_env = (
        bool(row.spec.get("api_key_env"))
        and "api_key_env" not in given
        and given.get("api_key") is None
    )
    if keeps_stored or keeps_env:
        kept = "stored api_key" if keeps_stored else f"key from {row.spec['api_key_env']}"
        raise ApiError(
            422,
            ["body", "base_url"],
            f"base_url moves {name} to another host ({where or new}): give api_key or api_key_env"
            f" again in the same request, so the {kept} is never sent to a host it was not"
            " given for",
        )


@router.post(
    "",
    operation_id="create_model",
    status_code=status.HTTP_201_CREATED,
    dependencies=[Admin],
    responses=error_responses(401, 409, 422),
)
async def create_model(
    body: ModelCreate,
    s: ServicesDep,
    check: Annotated[bool, Query(description="first send the endpoint one tiny request")] = False,
) -> ModelOut:
    """Register an OpenAI-compatible endpoint; `?check=true` proves it answers first."""
    # async: a check waits on the event loop, not on a thread other requests need; the store
    # is written from the thread pool
    if body.api_key_env is not None:
        _allowed_key_env(s, body.api_key_env)
    spec = {
        "name": body.name,
        "kind": ModelKind.OPENAI.value,
        **body.model_dump(include=set(_SPEC_FIELDS)),
    }
    api_key = body.api_key.get_secret_value() if body.api_key else None
    sealed = _seal(s, api_key) if api_key else None
    if check:
        await s.checks.check(spec, api_key)
    return await run_in_threadpool(_insert, s, body, spec, sealed)


def _insert(s: Services, body: ModelCreate, spec: dict[str, Any], sealed: bytes | None) -> ModelOut:
    try:
        row = store.insert_model(s.pool, body.name, spec, sealed, _meta(body.model_dump()))
    except store.DuplicateModel as exc:
        raise ApiError(409, ["body", "name"], str(exc), "duplicate") from None
    return model_out(row)


@router.get("", operation_id="list_models")
def list_models(
    pool: PoolDep,
    include_retired: Annotated[bool, Query(description="retired models too")] = False,
) -> ModelList:
    return ModelList(models=[model_out(r) for r in store.list_models(pool, include_retired)])


def _get(pool: PoolDep, name: str) -> store.ModelRecord:
    try:
        return store.get_model(pool, name)
    except store.UnknownModel as exc:
        raise not_found(["path", "name"], str(exc)) from None


@router.get("/{name}", operation_id="get_model", responses=error_responses(404, 422))
def get_model(name: NamePath, pool: PoolDep) -> ModelOut:
    return model_out(_get(pool, name))


@router.patch(
    "/{name}",
    operation_id="update_model",
    dependencies=[Admin],
    responses=error_responses(401, 404, 409, 422),
)
async def update_model(
    name: NamePath,
    body: ModelUpdate,
    s: ServicesDep,
    check: Annotated[bool, Query(description="send the changed endpoint one tiny request")] = False,
) -> ModelOut:
    """Change what is given; the model's past matches keep what they were played with."""
    # async as create_model is: the store is read and written from the thread pool
    row = await run_in_threadpool(_get, s.pool, name)
    given = body.model_dump(exclude_unset=True)
    spec: dict[str, Any] = dict(row.spec)
    if row.kind is ModelKind.BASELINE:
        touched = sorted(set(given) & {*_SPEC_FIELDS, "api_key"})
        if touched:
            raise ApiError(
                409, ["body", touched[0]], f"{name} is a baseline: it has no endpoint to change"
            )
    if given.get("api_key_env") is not None:
        _allowed_key_env(s, given["api_key_env"])
    _refuse_moving_the_key(name, row, given)
    for field in _SPEC_FIELDS:
        if field in given:
            if given[field] is None and field in ("base_url", "model"):
                raise ApiError(422, ["body", field], f"{field} cannot be removed")
            spec[field] = given[field]
    changes = _meta(given)
    if "api_key" in given:
        changes["api_key_enc"] = (
            None if body.api_key is None else _seal(s, body.api_key.get_secret_value())
        )
        if body.api_key is not None:
            spec["api_key_env"] = None
    elif given.get("api_key_env"):
        changes["api_key_enc"] = None
    if check and spec_kind(spec) is not ModelKind.BASELINE:
        key = body.api_key.get_secret_value() if body.api_key else None
        if key is None and "api_key" not in given and row.has_api_key:
            raise ApiError(
                422, ["query", "check"], "give api_key again to check an endpoint with a stored key"
            )
        await s.checks.check(spec, key)
    changed = spec if spec != row.spec else None
    return model_out(await run_in_threadpool(store.update_model, s.pool, name, changed, changes))


@router.delete(
    "/{name}",
    operation_id="retire_model",
    dependencies=[Admin],
    responses=error_responses(401, 404, 422),
)
def retire_model(name: NamePath, pool: PoolDep) -> ModelOut:
    """Retire: it plays no new tournament, and keeps its matches and ratings."""
    _get(pool, name)
    return model_out(store.retire_model(pool, name))
