"""Models: an OpenAI-compatible endpoint plus metadata; the API key goes in, never out."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

from arena.vocabulary import ModelKind

NAME = r"^[A-Za-z0-9][A-Za-z0-9._:@/+-]{0,99}$"
ENV_VAR = r"^[A-Za-z_][A-Za-z0-9_]{0,127}$"
URL = r"^https?://[^\s/?#]+[^\s]*$"
KEY_ENV_RULE = (
    "or: read the key from this variable of the server. Only a model key's variable: one whose"
    " name starts with ARENA_MODEL_KEY_PREFIX (default ARENA_MODEL_KEY_) or one listed in"
    " ARENA_MODEL_KEY_ENVS, never one of the server's own settings (ARENA_SECRET_KEY, ...)"
)


class ModelMetadata(BaseModel):
    model_config = ConfigDict(extra="forbid")

    organization: str | None = Field(default=None, max_length=200)
    license: str | None = Field(default=None, max_length=200)
    open_weights: bool | None = None
    release_date: dt.date | None = None
    knowledge_cutoff: dt.date | None = None
    price_input_per_mtok: float | None = Field(default=None, ge=0, le=1e6)
    price_output_per_mtok: float | None = Field(default=None, ge=0, le=1e6)


class EndpointSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    temperature: float = Field(default=0.0, ge=0, le=2)
    max_tokens: int = Field(default=4096, gt=0, le=1_000_000)
    timeout_s: float = Field(default=300, gt=0, le=86_400)
    max_concurrency: int = Field(default=4, gt=0, le=10_000)


class ModelCreate(EndpointSettings, ModelMetadata):
    name: str = Field(pattern=NAME, description="unique; letters, digits and ._:@/+-")
    base_url: str = Field(pattern=URL, max_length=2000, description="…/v1 of the endpoint")
    model: str = Field(min_length=1, max_length=500, description="the endpoint's model id")
    api_key: SecretStr | None = Field(
        default=None, min_length=1, max_length=10_000, description="stored encrypted"
    )
    api_key_env: str | None = Field(default=None, pattern=ENV_VAR, description=KEY_ENV_RULE)

    @model_validator(mode="after")
    def _one_key_source(self) -> ModelCreate:
        if self.api_key is not None and self.api_key_env is not None:
            raise ValueError("give api_key or api_key_env, not both")
        return self


class ModelUpdate(BaseModel):
    """Only the fields given change; `api_key: null` removes the stored key."""

    model_config = ConfigDict(extra="forbid")

    base_url: str | None = Field(
        default=None,
        pattern=URL,
        max_length=2000,
        description="another scheme, host or port needs api_key or api_key_env in the same"
        " request: a stored key is never sent to a host it was not given for",
    )
    model: str | None = Field(default=None, min_length=1, max_length=500)
    api_key: SecretStr | None = Field(default=None, min_length=1, max_length=10_000)
    api_key_env: str | None = Field(default=None, pattern=ENV_VAR, description=KEY_ENV_RULE)
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0, le=1_000_000)
    timeout_s: float | None = Field(default=None, gt=0, le=86_400)
    max_concurrency: int | None = Field(default=None, gt=0, le=10_000)
    organization: str | None = Field(default=None, max_length=200)
    license: str | None = Field(default=None, max_length=200)
    open_weights: bool | None = None
    release_date: dt.date | None = None
    knowledge_cutoff: dt.date | None = None
    price_input_per_mtok: float | None = Field(default=None, ge=0, le=1e6)
    price_output_per_mtok: float | None = Field(default=None, ge=0, le=1e6)


class ModelOut(BaseModel):
    name: str
    kind: Literal[ModelKind.BASELINE, ModelKind.OPENAI, ModelKind.REPLAY]
    base_url: str | None
    model: str | None
    has_api_key: bool
    api_key_env: str | None
    temperature: float | None
    max_tokens: int | None
    timeout_s: float | None
    max_concurrency: int | None
    organization: str | None
    license: str | None
    open_weights: bool | None
    release_date: dt.date | None
    knowledge_cutoff: dt.date | None
    price_input_per_mtok: float | None
    price_output_per_mtok: float | None
    retired: bool
    retired_at: dt.datetime | None
    created_at: dt.datetime
    updated_at: dt.datetime


class ModelList(BaseModel):
    models: list[ModelOut]
