"""Environment builds for the modules that test them: each module gets its own cache and
builder (module scope), and the environment images it built are removed after it."""

from __future__ import annotations

from collections.abc import Iterator

import docker
import pytest

from ci_runner import CISettings
from ci_runner.environments import EnvironmentBuilder
from ci_runner.images import ImageBuilder
from ci_runner.providers.docker.provider import DockerProvider
from tests.ci_runner.env_builds import build_settings, remove_built_images


@pytest.fixture(scope="module")
def env_settings(tmp_path_factory: pytest.TempPathFactory) -> CISettings:
    return build_settings(tmp_path_factory.mktemp("env-cache"))


@pytest.fixture(scope="module")
def environments(
    docker_client: docker.DockerClient, env_settings: CISettings
) -> Iterator[EnvironmentBuilder]:
    """The builder; every environment image this module built is removed afterwards."""
    yield EnvironmentBuilder(
        ImageBuilder(DockerProvider(env_settings, docker_client), env_settings)
    )
    remove_built_images(docker_client, env_settings)
