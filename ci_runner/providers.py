"""The sandbox providers by name: ARENA_SANDBOX_PROVIDER picks one (Docker is the first)."""

from __future__ import annotations

from collections.abc import Callable

import docker

from ci_runner.config import CISettings
from ci_runner.errors import CIError
from ci_runner.sandbox.docker_provider import DockerProvider
from ci_runner.sandbox.provider import SandboxProvider

ProviderFactory = Callable[[CISettings, docker.DockerClient | None], SandboxProvider]

PROVIDERS: dict[str, ProviderFactory] = {DockerProvider.name: DockerProvider}


def provider_for(
    settings: CISettings, client: docker.DockerClient | None = None
) -> SandboxProvider:
    """The provider the settings name. `client`: an engine connection the caller already
    holds, for a provider that talks to that engine."""
    try:
        factory = PROVIDERS[settings.sandbox_provider]
    except KeyError:
        known = ", ".join(sorted(PROVIDERS))
        raise CIError(
            f"unknown sandbox provider {settings.sandbox_provider!r} "
            f"(ARENA_SANDBOX_PROVIDER); known: {known}"
        ) from None
    return factory(settings, client)
