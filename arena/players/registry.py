"""Players by name: the baselines, or models defined in a models file (YAML or TOML).

A model's key comes from the variable its `api_key_env` names. The command line reads any
variable (the environment is the user's own); the service passes its KeyEnvRule, so a model
registered through it reads only a model key, never one of the service's secrets.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from arena.players.base import Player
from arena.players.baselines import BASELINES
from arena.players.key_env import KeyEnvRefused, KeyEnvRule, key_from_env
from arena.players.openai import OpenAIModel, OpenAIPlayer
from arena.players.replay import ReplayPlayer
from arena.scrub import KnownSecrets
from arena.settings import DEFAULT_MAX_ANSWER_BYTES
from arena.tasks.schema import describe_validation_error
from arena.vocabulary import ModelKind


class ModelsFileError(ValueError):
    """The models file is unreadable or a model in it is malformed."""


class ReplayModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    kind: str = ModelKind.REPLAY.value
    path: Path


ModelSpec = OpenAIModel | ReplayModel


def spec_kind(spec: Mapping[str, Any]) -> ModelKind:
    """The kind of a stored or written spec: an endpoint when it names none."""
    return ModelKind(spec.get("kind", ModelKind.OPENAI.value))


def model_spec(name: str, spec: Mapping[str, Any]) -> ModelSpec | None:
    """The stored spec of a model; None for a baseline."""
    kind = spec_kind(spec)
    if kind is ModelKind.BASELINE:
        return None
    if kind is ModelKind.REPLAY:
        return ReplayModel.model_validate(spec)
    return OpenAIModel.model_validate(spec)


def stored_spec(name: str, spec: ModelSpec | None) -> dict[str, Any]:
    """What the store keeps of a model: its spec, or only its kind for a baseline."""
    if spec is None:
        if name not in BASELINES:
            raise ValueError(f"unknown model {name!r}")
        return {"kind": ModelKind.BASELINE.value}
    return spec.model_dump(mode="json")


def load_models_file(path: Path) -> dict[str, ModelSpec]:
    try:
        text = path.read_text()
    except OSError as exc:
        raise ModelsFileError(f"cannot read models file {path}: {exc}") from exc
    try:
        data: Any = tomllib.loads(text) if path.suffix == ".toml" else yaml.safe_load(text)
    except (tomllib.TOMLDecodeError, yaml.YAMLError) as exc:
        raise ModelsFileError(f"models file {path} does not parse: {exc}") from exc
    entries = data.get("models") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ModelsFileError(f"models file {path} needs a list under 'models'")
    models: dict[str, ModelSpec] = {}
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict):
            raise ModelsFileError(f"{path}: model #{number} is not a table")
        kind = entry.get("kind", ModelKind.OPENAI.value)
        if kind not in (ModelKind.OPENAI.value, ModelKind.REPLAY.value):
            raise ModelsFileError(
                f"{path}: model #{number}: kind must be openai or replay, not {kind!r}"
            )
        try:
            spec: ModelSpec = (
                ReplayModel.model_validate(entry)
                if kind == ModelKind.REPLAY.value
                else OpenAIModel.model_validate(entry)
            )
        except ValidationError as exc:
            raise ModelsFileError(
                f"{path}: model #{number}: {describe_validation_error(exc)}"
            ) from exc
        if spec.name in BASELINES or spec.name in models:
            raise ModelsFileError(f"{path}: model name {spec.name!r} is taken")
        if isinstance(spec, ReplayModel) and not spec.path.is_absolute():
            spec = spec.model_copy(update={"path": path.parent / spec.path})
        models[spec.name] = spec
    return models


def build_player(
    name: str,
    models: Mapping[str, ModelSpec],
    environ: Mapping[str, str],
    max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
    key_env: KeyEnvRule | None = None,
    secrets: KnownSecrets | None = None,
) -> Player:
    """The player named; `key_env` limits the variables a key is read from (None: any), and
    `secrets` are what the player scrubs from the endpoint's text besides its own key."""
    if name in BASELINES:
        return BASELINES[name]()
    spec = models.get(name)
    if spec is None:
        known = sorted([*BASELINES, *models])
        raise ModelsFileError(f"unknown model {name!r}; known: {', '.join(known)}")
    if isinstance(spec, ReplayModel):
        return ReplayPlayer(spec.name, spec.path)
    api_key = None
    if spec.api_key_env:
        try:
            api_key = key_from_env(name, spec.api_key_env, environ, key_env)
        except KeyEnvRefused as exc:
            raise ModelsFileError(str(exc)) from None
        if api_key is None:
            raise ModelsFileError(
                f"model {name}: environment variable {spec.api_key_env} is not set"
            )
    return OpenAIPlayer(spec, api_key, max_answer_bytes=max_answer_bytes, secrets=secrets)
