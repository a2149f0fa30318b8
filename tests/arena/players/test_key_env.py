"""Which variables a model's api_key_env may name: any on the command line, only model keys in
the service (a prefix or an allow-list, never a service secret)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from api.core.config import ApiSettings
from arena.players.key_env import KeyEnvRefused, KeyEnvRule, key_from_env
from arena.players.openai import OpenAIModel
from arena.players.registry import ModelsFileError, build_player
from arena.store.settings import ServiceSettings

SERVICE_SECRETS = [
    "ARENA_SECRET_KEY",
    "ARENA_ADMIN_TOKEN",
    "ARENA_DATABASE_URL",
    "ARENA_BROKER_URL",
    "ARENA_POSTGRES_PASSWORD",
]
ENVIRON = {name: f"value-of-{name}" for name in [*SERVICE_SECRETS, "ARENA_MODEL_KEY_OPENAI"]}


@pytest.mark.parametrize("name", [*SERVICE_SECRETS, "arena_secret_key", "HOME", "PGPASSWORD"])
def test_the_service_refuses_every_variable_but_a_model_keys(name: str) -> None:
    rule = ServiceSettings().key_env_rule()
    with pytest.raises(KeyEnvRefused) as refused:
        key_from_env("m1", name, ENVIRON, rule)
    message = str(refused.value)
    assert message.startswith(f"model m1: {name} may not be read: api_key_env must name")
    assert "ARENA_MODEL_KEY_" in message and "value-of" not in message and "not set" not in message


def test_a_variable_under_the_prefix_or_on_the_allow_list_is_read() -> None:
    rule = ServiceSettings(model_key_envs="OPENAI_API_KEY").key_env_rule()
    environ = {**ENVIRON, "OPENAI_API_KEY": "sk-openai"}
    assert key_from_env("m1", "ARENA_MODEL_KEY_OPENAI", environ, rule) == (
        "value-of-ARENA_MODEL_KEY_OPENAI"
    )
    assert key_from_env("m1", "OPENAI_API_KEY", environ, rule) == "sk-openai"
    assert key_from_env("m1", "ARENA_MODEL_KEY_UNSET", environ, rule) is None
    assert not rule.allows("ARENA_MODEL_KEY_")  # the prefix alone names no key


def test_no_prefix_or_list_reaches_a_service_secret() -> None:
    rule = KeyEnvRule(prefix="ARENA_", allowed=frozenset({"ARENA_SECRET_KEY"}))
    assert rule.allows("ARENA_MODEL_KEY_X")
    for name in SERVICE_SECRETS:
        assert not rule.allows(name)
    everything = ApiSettings(model_key_prefix="ARENA_").key_env_rule()
    for name in ("ARENA_MODEL_KEY_PREFIX", "ARENA_MODEL_KEY_ENVS", "ARENA_STATS_TTL_S"):
        assert not everything.allows(name)  # the service's own settings, whatever they hold
    with pytest.raises(ValidationError, match="lists the service's own settings"):
        ServiceSettings(model_key_envs="OPENAI_API_KEY,arena_admin_token")
    with pytest.raises(ValidationError, match="not an environment variable name"):
        ServiceSettings(model_key_envs="OPENAI API KEY")


def test_an_empty_prefix_leaves_only_the_allow_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_MODEL_KEY_PREFIX", "")
    monkeypatch.setenv("ARENA_MODEL_KEY_ENVS", " OPENAI_API_KEY , ANTHROPIC_API_KEY ")
    rule = ServiceSettings().key_env_rule()
    assert rule.allowed == {"OPENAI_API_KEY", "ANTHROPIC_API_KEY"}
    assert not rule.allows("ARENA_MODEL_KEY_OPENAI") and rule.allows("ANTHROPIC_API_KEY")
    assert "ANTHROPIC_API_KEY, OPENAI_API_KEY" in rule.rule()
    assert "reads no model key" in KeyEnvRule(prefix="").rule()


def test_the_registry_applies_the_services_rule_and_the_command_line_reads_any() -> None:
    spec = OpenAIModel(
        name="m1", base_url="http://127.0.0.1:9/v1", model="x", api_key_env="ARENA_SECRET_KEY"
    )
    rule = ServiceSettings().key_env_rule()
    with pytest.raises(ModelsFileError, match="model m1: ARENA_SECRET_KEY may not be read"):
        build_player("m1", {"m1": spec}, ENVIRON, key_env=rule)
    assert build_player("m1", {"m1": spec}, ENVIRON).name == "m1"  # the user's own environment


def test_the_service_knows_its_secrets_from_its_settings() -> None:
    settings = ServiceSettings(
        secret_key="the-secret-key",
        admin_token="the-admin-token",
        database_url="postgresql://arena:p%40ss-word-1@db:5432/arena",
        broker_url="redis://:redis-pass-2@redis:6379/0",
    )
    assert set(settings.known_secrets()) == {
        "the-secret-key",
        "the-admin-token",
        "p%40ss-word-1",
        "p@ss-word-1",
        "redis-pass-2",
    }
    none = ServiceSettings(
        secret_key=None,
        admin_token=None,
        database_url="postgresql://arena@db/arena",
        broker_url="redis://redis:6379/0",
    )
    assert none.known_secrets() == []
