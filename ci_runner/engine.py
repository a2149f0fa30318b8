"""The connection to a Docker engine, with an error that says how to get one."""

import docker
import docker.errors

from ci_runner.errors import SandboxError


def connect() -> docker.DockerClient:
    try:
        client = docker.from_env(timeout=120)
        client.ping()
    except docker.errors.DockerException as exc:
        raise SandboxError(
            f"no Docker engine answers ({exc}); start one (dockerd) or set DOCKER_HOST"
        ) from exc
    return client
