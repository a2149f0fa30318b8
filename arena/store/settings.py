"""The service's settings, read once from ARENA_* variables and passed in."""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import SettingsConfigDict

from arena.players.key_env import (
    DEFAULT_PREFIX,
    ENV_NAME,
    KeyEnvRule,
    denied_names,
    parse_env_names,
)
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
    # every write to the API needs `Authorization: Bearer <token>`; workers read it too, only to
    # know it for a secret (compose gives every service the same variables)
    admin_token: SecretStr | None = None
    # the variables a model's api_key_env may name: under this prefix ("" for none) or listed
    # in model_key_envs (comma-separated), never one of these settings (key_env_rule)
    model_key_prefix: str = DEFAULT_PREFIX
    model_key_envs: str = ""

    @field_validator("model_key_prefix")
    @classmethod
    def _a_variable_prefix(cls, prefix: str) -> str:
        if prefix and not ENV_NAME.match(prefix):
            raise ValueError("must be the start of an environment variable name, or empty")
        return prefix

    @field_validator("model_key_envs")
    @classmethod
    def _variable_names(cls, names: str) -> str:
        """Refused at start-up when it lists a service secret: that is a mistake to say early
        (the rule would refuse the name anyway)."""
        listed = parse_env_names(names)
        own = sorted(n for n in listed if n.upper() in denied_names(cls.model_fields))
        if own:
            raise ValueError(
                f"lists the service's own settings ({', '.join(own)}):"
                " a model's key is never read from them"
            )
        return ",".join(sorted(listed))

    def key_env_rule(self) -> KeyEnvRule:
        """Which variables a model registered through the service may read its key from."""
        return KeyEnvRule(
            prefix=self.model_key_prefix,
            allowed=parse_env_names(self.model_key_envs),
            denied=denied_names(type(self).model_fields),
        )

    def known_secrets(self) -> list[str]:
        """The service's own secrets, to be scrubbed from whatever it stores, logs or serves:
        the secret key, the admin token, and the passwords in the store's and broker's URLs."""
        found = [s.get_secret_value() for s in (self.secret_key, self.admin_token) if s]
        for url in (self.database_url, self.broker_url):
            found.extend(_passwords(url))
        return found


def _passwords(url: str) -> list[str]:
    """The password in a URL, as written and decoded."""
    try:
        password = urlsplit(url).password
    except ValueError:
        return []
    return [password, unquote(password)] if password else []
