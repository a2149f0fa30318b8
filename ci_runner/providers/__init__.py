"""The sandbox providers by name: ARENA_SANDBOX_PROVIDER picks one (Docker is the first).

Each is named by where its class lives, and imported only when a setting names it: a
provider's SDK (Docker's client, a Kubernetes client) loads in the processes that use it,
never in one that only reads the registry or runs another provider.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from ci_runner.config import CISettings
from ci_runner.errors import CIError
from ci_runner.sandbox.provider import SandboxProvider

# (settings, an engine connection the caller already holds, or None) -> the provider
ProviderFactory = Callable[[CISettings, object | None], SandboxProvider]

# name -> "module:attribute" of its factory (a SandboxProvider class)
PROVIDERS: dict[str, str] = {"docker": "ci_runner.providers.docker.provider:DockerProvider"}


def provider_factory(name: str) -> ProviderFactory:
    """The factory of the provider `name`, imported now."""
    try:
        home = PROVIDERS[name]
    except KeyError:
        known = ", ".join(sorted(PROVIDERS))
        raise CIError(
            f"unknown sandbox provider {name!r} (ARENA_SANDBOX_PROVIDER); known: {known}"
        ) from None
    module, _, attribute = home.partition(":")
    factory: ProviderFactory = getattr(importlib.import_module(module), attribute)
    return factory


def provider_for(settings: CISettings, client: object | None = None) -> SandboxProvider:
    """The provider the settings name. `client`: an engine connection the caller already
    holds, for a provider that talks to that engine."""
    return provider_factory(settings.sandbox_provider)(settings, client)
