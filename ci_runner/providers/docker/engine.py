"""The connection to a Docker engine, with an error that says how to get one."""

import docker
import docker.errors
import requests

from ci_runner.errors import SandboxError

# what a call to the engine raises when the engine itself is the problem
ENGINE_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException)


def connect(timeout_s: int = 120) -> docker.DockerClient:
    """A client of the engine the environment names (DOCKER_HOST, or the local socket) that
    has answered a ping; `timeout_s` bounds each of its calls."""
    try:
        client = docker.from_env(timeout=timeout_s)
        client.ping()
    except ENGINE_ERRORS as exc:
        raise SandboxError(
            f"no Docker engine answers ({exc}); start one (dockerd) or set DOCKER_HOST"
        ) from exc
    return client
