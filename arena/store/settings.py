"""The service's settings, read once from ARENA_* variables and passed in."""

from __future__ import annotations

from pydantic import Field, SecretStr
from pydantic_settings import SettingsConfigDict

from arena.settings import PlayerSettings


class ServiceSettings(PlayerSettings):
    model_config = SettingsConfigDict(env_prefix="ARENA_", extra="ignore")

    database_url: str = "postgresql://arena@localhost/arena"
    broker_url: str = "redis://localhost:6379/0"
    step_attempts: int = Field(default=3, gt=0)  # a step is failed after this many tries
    step_lease_s: float = Field(default=60.0, gt=0)  # a dead worker's step is retaken after
    reconcile_s: float = Field(default=30.0, gt=0)  # how often the reconciler looks
    stall_s: float = Field(default=300.0, gt=0)  # a match nothing happened to for this long
    ratings_debounce_s: float = Field(default=10.0, ge=0)
    ratings_bootstrap: int = Field(default=1000, ge=10)
    hard_time_limit_s: int = Field(default=3600, gt=0)  # the longest any one step may take
    # a worker whose consumer has not run for this long (broker lost, consumer dead) exits
    worker_down_s: float = Field(default=300.0, gt=0)
    # encrypts model API keys at rest (the API stores them, workers read them)
    secret_key: SecretStr | None = None
