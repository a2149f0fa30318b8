"""Which environment variables a model registered through the service may read its key from.

A model's `api_key_env` names a variable of the process that calls the endpoint, and that
variable's value is sent to the model's `base_url`. On the command line the environment is the
user's own and any variable may be named. In the service, whoever registers a model names a
variable of the server's environment: left open, `ARENA_SECRET_KEY`, the admin token and the
database password would go to any URL. So the service allows only variables under a prefix or
on an allow-list it is configured with, and never one of its own settings.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
DEFAULT_PREFIX = "ARENA_MODEL_KEY_"
# the service's secrets beside its settings' own names (compose passes the database password)
SERVICE_SECRET_ENVS = frozenset(
    {
        "ARENA_SECRET_KEY",
        "ARENA_ADMIN_TOKEN",
        "ARENA_DATABASE_URL",
        "ARENA_BROKER_URL",
        "ARENA_POSTGRES_PASSWORD",
    }
)


class KeyEnvRefused(ValueError):
    """An `api_key_env` the service does not read a key from; the message states the rule."""


@dataclass(frozen=True)
class KeyEnvRule:
    """Variables under `prefix` (none when it is empty) or named in `allowed`, and never one in
    `denied` (compared case-insensitively: settings are read so)."""

    prefix: str = DEFAULT_PREFIX
    allowed: frozenset[str] = frozenset()
    denied: frozenset[str] = SERVICE_SECRET_ENVS

    def __post_init__(self) -> None:
        object.__setattr__(self, "denied", frozenset(d.upper() for d in self.denied))

    def allows(self, name: str) -> bool:
        if name.upper() in self.denied or not ENV_NAME.match(name):
            return False
        by_prefix = bool(self.prefix) and name.startswith(self.prefix) and name != self.prefix
        return by_prefix or name in self.allowed

    def rule(self) -> str:
        """The rule in a sentence, for a refusal: it never says whether a variable exists."""
        sources = []
        if self.prefix:
            sources.append(f"a variable whose name starts with {self.prefix}")
        if self.allowed:
            sources.append(f"one of {', '.join(sorted(self.allowed))}")
        if not sources:
            return "the server reads no model key from its environment (use api_key)"
        return (
            f"api_key_env must name {' or '.join(sources)} (ARENA_MODEL_KEY_PREFIX,"
            " ARENA_MODEL_KEY_ENVS), never one of the server's own settings"
            " such as ARENA_SECRET_KEY"
        )

    def check(self, name: str) -> None:
        """Raises KeyEnvRefused naming the variable given and the rule."""
        if not self.allows(name):
            raise KeyEnvRefused(f"{name} may not be read: {self.rule()}")


def parse_env_names(text: str) -> frozenset[str]:
    """A comma-separated list of variable names (ARENA_MODEL_KEY_ENVS); ValueError naming a bad
    one."""
    names = frozenset(n.strip() for n in text.split(",") if n.strip())
    bad = sorted(n for n in names if not ENV_NAME.match(n))
    if bad:
        raise ValueError(f"not an environment variable name: {', '.join(bad)}")
    return names


def key_from_env(
    model: str, name: str, environ: Mapping[str, str], rule: KeyEnvRule | None
) -> str | None:
    """The key in variable `name` (None when it is not set), once the rule allows the name:
    the service passes its rule, the command line none (any variable of the user's own)."""
    if rule is not None:
        try:
            rule.check(name)
        except KeyEnvRefused as exc:
            raise KeyEnvRefused(f"model {model}: {exc}") from None
    return environ.get(name)


def denied_names(setting_fields: Iterable[str]) -> frozenset[str]:
    """The service's own settings as variables (`ARENA_<FIELD>`), with its other secrets."""
    return SERVICE_SECRET_ENVS | {f"ARENA_{f.upper()}" for f in setting_fields}
