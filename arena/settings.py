"""Settings of the engine's players (how much of an answer is read), read once from ARENA_*."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_MAX_ANSWER_BYTES = 4 * 1024 * 1024


class PlayerSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ARENA_", extra="ignore")

    # a model's HTTP answer (the whole response body) is read up to this many bytes; a larger
    # one is refused unread past it, as the model's fault
    max_answer_bytes: int = Field(default=DEFAULT_MAX_ANSWER_BYTES, gt=0)
