"""The Docker sandbox: one locked-down container per CI run, always removed."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

import docker
import docker.errors
from docker.models.containers import Container

from ci_runner.engine import ENGINE_ERRORS
from ci_runner.errors import SandboxError
from ci_runner.images import SANDBOX_HOME, SANDBOX_UID, WORKSPACE
from ci_runner.sandbox.base import ExecResult, Sandbox
from ci_runner.sandbox.limits import OutputBuffer
from ci_runner.types import Limits

LABEL = "arena.ci"
_KILLED_BY_SIGKILL = 137


def sandbox_uid() -> int:
    """Root on the host runs the sandbox as the image's user; anyone else as themselves."""
    uid = os.geteuid()
    return SANDBOX_UID if uid == 0 else uid


def _labels() -> dict[str, str]:
    return {
        LABEL: "1",
        f"{LABEL}.host": socket.gethostname(),
        f"{LABEL}.pid": str(os.getpid()),
        f"{LABEL}.started": str(int(time.time())),
    }


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_orphans(client: docker.DockerClient, *, max_age_s: float | None = None) -> list[str]:
    """Remove sandbox containers whose owning process on this host is gone (or too old)."""
    removed: list[str] = []
    host = socket.gethostname()
    for container in client.containers.list(all=True, filters={"label": LABEL}):
        labels = container.labels
        started = float(labels.get(f"{LABEL}.started", "0"))
        mine = labels.get(f"{LABEL}.host") == host
        orphan = mine and not _pid_alive(int(labels.get(f"{LABEL}.pid", "0") or 0))
        stale = max_age_s is not None and time.time() - started > max_age_s
        if orphan or stale:
            try:
                container.remove(force=True)
                removed.append(str(container.name))
            except docker.errors.NotFound:
                pass
    return removed


class DockerSandbox(Sandbox):
    """A container with no network, no capabilities, a read-only root and hard limits."""

    def __init__(self, client: docker.DockerClient, container: Container) -> None:
        self._client = client
        self._container = container
        self._dead = False
        self._closed = False

    @property
    def container_id(self) -> str:
        return str(self._container.id)

    @classmethod
    def start(
        cls, client: docker.DockerClient, image: str, workspace: Path, limits: Limits
    ) -> DockerSandbox:
        uid = sandbox_uid()
        cpus = min(limits.cpus, float(os.cpu_count() or 1))  # the engine refuses more than exist
        home_opts = f"rw,exec,nosuid,nodev,size={limits.tmpfs_mb}m,uid={uid},gid={uid},mode=0700"
        try:
            container = client.containers.create(
                image,
                command=["sleep", str(int(limits.run_timeout_s) + 120)],
                detach=True,
                init=True,
                network_mode="none",
                user=f"{uid}:{uid}",
                read_only=True,
                tmpfs={
                    "/tmp": f"rw,exec,nosuid,nodev,size={limits.tmpfs_mb}m,mode=1777",
                    SANDBOX_HOME: home_opts,
                },
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                nano_cpus=int(cpus * 1e9),
                mem_limit=f"{limits.memory_mb}m",
                memswap_limit=f"{limits.memory_mb}m",
                pids_limit=limits.pids,
                volumes={str(workspace): {"bind": WORKSPACE, "mode": "rw"}},
                working_dir=WORKSPACE,
                environment={"HOME": SANDBOX_HOME, "CI": "true", "LANG": "C.UTF-8"},
                hostname="arena-ci",
                labels=_labels(),
            )
        except docker.errors.ImageNotFound as exc:
            raise SandboxError(
                f"CI image {image} is missing: build it with `arena ci images`"
            ) from exc
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot create the sandbox container: {exc}") from exc
        try:
            sandbox = cls(client, container)
            container.start()
        except BaseException as exc:
            container.remove(force=True, v=True)
            if isinstance(exc, ENGINE_ERRORS):
                raise SandboxError(f"cannot start the sandbox container: {exc}") from exc
            raise
        return sandbox

    def exec(
        self,
        command: str,
        *,
        env: dict[str, str],
        workdir: str,
        timeout_s: float,
        max_output_bytes: int,
    ) -> ExecResult:
        if self._dead:
            raise SandboxError("the sandbox was killed; start a new one")
        api = self._client.api
        started = time.monotonic()
        since = int(time.time()) - 1
        try:
            exec_id = api.exec_create(
                self.container_id,
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", command],
                stdout=True,
                stderr=True,
                environment=env,
                workdir=workdir,
            )["Id"]
            stream = api.exec_start(exec_id, stream=True, demux=False)
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot exec in the sandbox: {exc}") from exc
        buffer = OutputBuffer(max_output_bytes)
        failure: list[BaseException] = []

        def pump() -> None:
            try:
                for chunk in stream:
                    buffer.append(chunk)
            except Exception as exc:  # the stream breaks when the container is killed
                failure.append(exc)

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        reader.join(timeout_s)
        timed_out = reader.is_alive()
        if timed_out:
            self.kill()
            reader.join(10)
        duration = time.monotonic() - started
        exit_code: int | None = None
        if not timed_out:
            try:
                exit_code = api.exec_inspect(exec_id).get("ExitCode")
            except ENGINE_ERRORS as exc:
                raise SandboxError(f"cannot read the exit code of a step: {exc}") from exc
            if failure and exit_code is None:
                raise SandboxError(f"lost the output stream of a step: {failure[0]}")
        oom = exit_code == _KILLED_BY_SIGKILL and self._oom_since(since)
        return ExecResult(
            exit_code=exit_code,
            output=buffer.text(),
            truncated=buffer.truncated,
            timed_out=timed_out,
            oom_killed=oom,
            duration_s=duration,
        )

    def _oom_since(self, since: int) -> bool:
        """Whether the kernel's OOM killer hit this container's cgroup since `since`."""
        try:
            events: Any = self._client.api.events(
                since=since,
                until=int(time.time()) + 1,
                filters={"container": self.container_id, "event": "oom"},
                decode=True,
            )
            try:
                return any(True for _ in events)
            finally:
                events.close()
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot read the engine's events: {exc}") from exc

    def kill(self) -> None:
        self._dead = True
        with contextlib.suppress(docker.errors.APIError):  # already stopped or gone: fine
            self._container.kill()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._dead = True
        try:
            self._container.remove(force=True, v=True)
        except docker.errors.NotFound:
            pass
        except ENGINE_ERRORS as exc:
            raise SandboxError(
                f"cannot remove sandbox container {self.container_id}: {exc}"
            ) from exc
