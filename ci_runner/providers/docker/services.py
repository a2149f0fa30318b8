"""A job's services as containers beside its Docker sandbox, in its network namespace.

The kinds, their images and their probes are the provider's neutral part (ci_runner.services);
this is how the Docker provider starts, probes and removes them.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from types import TracebackType

import docker.errors
from docker.models.containers import Container

from ci_runner.errors import ImageError, ServiceError
from ci_runner.pipeline import Service
from ci_runner.providers.docker.engine import ENGINE_ERRORS
from ci_runner.providers.docker.sandbox import DockerSandbox, start_beside
from ci_runner.services import (
    READY_TIMEOUT_S,
    Progress,
    ServiceImages,
    ServiceKind,
    kind_of,
    service_port,
)


class RunningServices:
    """The service containers beside one job container; `close` removes them all."""

    def __init__(self) -> None:
        self._containers: list[Container] = []

    def add(self, container: Container) -> None:
        self._containers.append(container)

    def close(self) -> None:
        containers, self._containers = self._containers, []
        for container in containers:
            with contextlib.suppress(docker.errors.NotFound):
                try:
                    container.remove(force=True, v=True)
                except ENGINE_ERRORS as exc:  # `arena ci sweep` removes what is left
                    raise ImageError(f"cannot remove service container: {exc}") from exc

    def __enter__(self) -> RunningServices:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _logs(container: Container) -> str:
    try:
        return bytes(container.logs(tail=40)).decode("utf-8", errors="replace").strip()
    except ENGINE_ERRORS:
        return "(no log)"


def _running(container: Container) -> bool:
    try:
        container.reload()
    except docker.errors.NotFound:
        return False
    return bool(container.status == "running")


def _wait_ready(name: str, container: Container, kind: ServiceKind, deadline: float) -> None:
    what = f"service {name!r} ({kind.name})"
    while True:
        code = None
        try:
            if _running(container):
                code, _ = container.exec_run(["sh", "-c", kind.ready])
        except ENGINE_ERRORS as exc:
            if _running(container):
                raise ServiceError(f"{what} cannot be probed: {exc}") from exc
        if code == 0:
            return
        if not _running(container):
            raise ServiceError(f"{what} stopped while starting:\n{_logs(container)}")
        if time.monotonic() > deadline:
            raise ServiceError(
                f"{what} was not ready after {READY_TIMEOUT_S:.0f}s:\n{_logs(container)}"
            )
        time.sleep(0.5)


def start_services(
    images: ServiceImages,
    services: Mapping[str, Service],
    job: DockerSandbox,
    progress: Progress,
) -> RunningServices:
    """Start the job's services in the job container's network namespace and wait until each
    accepts connections; on failure, whatever started is removed again."""
    client = job.client
    running = RunningServices()
    try:
        for name, service in sorted(services.items()):
            kind = kind_of(service.image)
            image = images.ensure(kind, progress)
            port = service_port(service, kind)
            progress(f"starting service {name!r} ({kind.name} on localhost:{port})")
            container = start_beside(
                client,
                job,
                image,
                environment={**service.env, "ARENA_PORT": str(port)},
                memory_mb=images.settings.service_memory_mb,
            )
            running.add(container)
            _wait_ready(name, container, kind, time.monotonic() + READY_TIMEOUT_S)
    except BaseException:
        running.close()
        raise
    return running
