"""Settings for environment builds on this machine, and removal of the images a test built.

The Docker engine is shared (other test runs, benchmarks, the service): a test removes only
the environment images its own settings recorded, never every `arena.env` image that
appeared while it ran.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path

import docker
import docker.errors

from ci_runner import CISettings
from ci_runner.environments import EnvironmentRecord
from tests.command import run_arena

HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")


def build_settings(cache_dir: Path) -> CISettings:
    """This machine reaches PyPI only from the host network, through a TLS-intercepting proxy."""
    settings = CISettings(cache_dir=cache_dir)
    updates: dict[str, object] = {}
    if "ARENA_BUILD_NETWORK" not in os.environ:
        updates["build_network"] = "host"
    if settings.build_ca_bundle is None and HOST_CA.is_file():
        updates["build_ca_bundle"] = HOST_CA
    return settings.model_copy(update=updates)


def build_variables(settings: CISettings) -> dict[str, str]:
    """The variables that give an `arena` command these build settings."""
    variables = {
        "ARENA_CACHE_DIR": str(settings.cache_dir),
        "ARENA_BUILD_NETWORK": settings.build_network,
    }
    if settings.build_ca_bundle is not None:
        variables["ARENA_BUILD_CA_BUNDLE"] = str(settings.build_ca_bundle)
    return variables


def run_arena_building(args: list[str], settings: CISettings) -> subprocess.CompletedProcess[str]:
    """`arena *args` with these build settings, tables wide enough for image tags."""
    return run_arena(args, None, **build_variables(settings), COLUMNS="250")


def remove_built_images(client: docker.DockerClient, settings: CISettings) -> list[str]:
    """Remove the environment images built with `settings` (their build records name them)."""
    removed = []
    directory = settings.environments_dir
    for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
        record = EnvironmentRecord.model_validate_json(path.read_text())
        if record.error is None:
            with contextlib.suppress(docker.errors.ImageNotFound, docker.errors.APIError):
                client.images.remove(record.tag)
                removed.append(record.tag)
    return removed
