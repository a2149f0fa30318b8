"""The Docker provider: CI sandboxes, build boxes and services as containers of one engine
(local, or wherever DOCKER_HOST points)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import docker
import docker.errors
import docker.models.containers

from ci_runner.config import CISettings
from ci_runner.errors import ImageError, SandboxError
from ci_runner.image_layout import WORKSPACE
from ci_runner.images import ImageBuilder
from ci_runner.pipeline import Service
from ci_runner.providers.docker.engine import ENGINE_ERRORS, connect
from ci_runner.providers.docker.images import DockerImageStore
from ci_runner.providers.docker.sandbox import (
    SANDBOX_CPU_SHARES,
    DockerSandbox,
    engine_cpus,
    sandbox_cpus,
    sandbox_labels,
    sandbox_uid,
    sweep_orphans,
)
from ci_runner.providers.docker.seccomp import build_seccomp_profile
from ci_runner.providers.docker.services import RunningServices, start_services
from ci_runner.sandbox.base import Sandbox
from ci_runner.sandbox.provider import BesideServices, SandboxProvider
from ci_runner.services import ServiceImages
from ci_runner.types import Limits

log = logging.getLogger(__name__)

MIN_BUILD_PIDS = 1024  # package managers fork widely
# what root in a build box keeps: files of any owner (apt, pip, chown in setup steps), and
# dropping to another user (apt's _apt sandbox, `su`); never raw sockets (NET_RAW sniffed the
# host's loopback on a host-network build), network administration, device nodes or chroot
BUILD_CAPABILITIES = ("CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "SETUID", "SETGID", "KILL")


class DockerProvider(SandboxProvider):
    name = "docker"

    def __init__(self, settings: CISettings, client: docker.DockerClient | None = None) -> None:
        self._settings = settings
        self._client = client
        self._images: DockerImageStore | None = None
        # whether the engine's storage sizes a container's layer (`--storage-opt size`:
        # overlay2 on xfs with project quotas); None until a build box has asked
        self._sized_layers: bool | None = None

    @property
    def client(self) -> docker.DockerClient:
        if self._client is None:
            self._client = connect()
        return self._client

    def ping(self) -> None:
        if self._client is None:
            self._client = connect()  # which pings, and says how to start an engine
            return
        try:
            self._client.ping()
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"the Docker engine does not answer: {exc}") from exc

    def unreachable(self, timeout_s: int) -> str | None:
        # a client of its own: the provider's keeps its long timeout for builds and runs
        try:
            connect(timeout_s).close()
        except SandboxError as exc:
            return str(exc)
        return None

    @property
    def images(self) -> DockerImageStore:
        if self._images is None:
            self._images = DockerImageStore(self.client)
        return self._images

    @property
    def sandbox_uid(self) -> int:
        return sandbox_uid()

    def start(self, image: str, limits: Limits, *, idle_s: float = 0.0) -> DockerSandbox:
        return DockerSandbox.start(self.client, image, limits, idle_s=idle_s)

    def start_build(
        self,
        image: str,
        limits: Limits,
        *,
        network: str,
        lifetime_s: float,
        scratch: Mapping[str, int],
        labels: Mapping[str, str],
        memory_mb: int,
        disk_mb: int,
        unset_env: Sequence[str] = (),
    ) -> DockerSandbox:
        """No host path is mounted; the scratch directories are tmpfs mounts, which
        `docker commit` leaves out. What they hold counts within `memory_mb`: sized on top of
        it, their unused room let a setup step's processes take that much more (a dataset
        line's 4 GiB held in a box of 2 GiB beside a 4 GiB workspace)."""
        client = self.client
        memory = f"{memory_mb}m"
        options: dict[str, Any] = {
            "command": ["sleep", str(int(lifetime_s))],
            "detach": True,
            "init": True,
            "network_mode": network,
            "tmpfs": {path: f"rw,exec,size={mb}m,mode=0755" for path, mb in scratch.items()},
            "working_dir": WORKSPACE,
            "nano_cpus": int(sandbox_cpus(limits, engine_cpus(client)) * 1e9),
            "cpu_shares": SANDBOX_CPU_SHARES,
            "pids_limit": max(limits.pids, MIN_BUILD_PIDS),
            "mem_limit": memory,
            "memswap_limit": memory,
            "cap_drop": ["ALL"],
            "cap_add": list(BUILD_CAPABILITIES),
            "security_opt": ["no-new-privileges", f"seccomp={build_seccomp_profile()}"],
            # owned like a sandbox: swept once its owner is gone or its time is up
            "labels": {**labels, **sandbox_labels(client, lifetime_s)},
            # a name without a value takes the image's variable away (the engine's merge)
            "environment": list(unset_env),
        }
        try:
            container = self._create_sized(image, options, disk_mb)
        except docker.errors.ImageNotFound as exc:
            raise ImageError(f"toolchain image {image} is missing") from exc
        except ENGINE_ERRORS as exc:
            raise ImageError(f"cannot create the environment build container: {exc}") from exc
        box = DockerSandbox(client, container, as_root=True)
        try:
            container.start()
        except BaseException as exc:
            box.close()
            if isinstance(exc, ENGINE_ERRORS):
                raise ImageError(f"cannot start the environment build container: {exc}") from exc
            raise
        box.watch_disk(disk_mb)
        return box

    def _create_sized(
        self, image: str, options: dict[str, Any], disk_mb: int
    ) -> docker.models.containers.Container:
        """The build box, its layer sized to `disk_mb` where the engine's storage can (an
        exact bound; the disk watch stays as a second guard), else unsized: the watch alone
        bounds it (`fallocate` is refused: build_seccomp_profile). An engine that refuses the
        size is asked once."""
        containers = self.client.containers
        if self._sized_layers is not False:
            try:
                sized = containers.create(image, storage_opt={"size": f"{disk_mb}m"}, **options)
            except docker.errors.APIError as exc:
                # overlay2 on ext4: "--storage-opt is supported only for overlay over xfs
                # with 'pquota' mount option" (a 500)
                if exc.status_code != 500 or "storage" not in str(exc).lower():
                    raise
                self._sized_layers = False
                log.info("the engine cannot size a build box's layer: %s", exc)
            else:
                self._sized_layers = True
                return sized
        return containers.create(image, **options)

    def commit(
        self, box: Sandbox, tag: str, *, changes: Sequence[str], labels: Mapping[str, str]
    ) -> None:
        if not isinstance(box, DockerSandbox):
            raise TypeError(f"the Docker provider cannot commit a {type(box).__name__}")
        repository, _, version = tag.rpartition(":")
        try:
            self.client.api.commit(
                box.container_id,
                repository=repository,
                tag=version,
                changes=list(changes),
                conf={"Labels": dict(labels)},
            )
        except ENGINE_ERRORS as exc:
            raise ImageError(f"committing {tag} failed: {exc}") from exc

    def start_services(
        self,
        services: Mapping[str, Service],
        job: Sandbox,
        progress: Callable[[str], None],
    ) -> BesideServices:
        if not isinstance(job, DockerSandbox):
            raise TypeError(f"the Docker provider cannot start services beside a {type(job)}")
        if not services:
            return RunningServices()
        images = ServiceImages(ImageBuilder(self, self._settings))
        return start_services(images, services, job, progress)

    def sweep(self, max_age_s: float | None = None) -> list[str]:
        try:
            return sweep_orphans(self.client, max_age_s=max_age_s)
        except ENGINE_ERRORS as exc:  # another sweep removed a container first, say
            raise SandboxError(f"the Docker engine failed it: {exc}") from exc
