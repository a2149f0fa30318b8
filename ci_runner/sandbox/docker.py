"""The Docker sandbox: one locked-down container per CI run, always removed."""

from __future__ import annotations

import contextlib
import io
import os
import posixpath
import socket
import tarfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docker
import docker.errors
from docker.models.containers import Container
from docker.types import LogConfig
from docker.utils.socket import STDERR, frames_iter

from ci_runner.engine import ENGINE_ERRORS
from ci_runner.errors import SandboxError
from ci_runner.images import ENV_IMAGE_LABEL, SANDBOX_HOME, SANDBOX_UID, WORKSPACE
from ci_runner.owners import pid_alive
from ci_runner.sandbox.base import ExecResult, Sandbox, SandboxDied, SandboxFileError
from ci_runner.sandbox.limits import OutputBuffer
from ci_runner.sandbox.seccomp import seccomp_profile
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


def sweep_orphans(client: docker.DockerClient, *, max_age_s: float | None = None) -> list[str]:
    """Remove sandbox containers whose owning process on this host is gone (or too old)."""
    removed: list[str] = []
    host = socket.gethostname()
    for container in client.containers.list(all=True, filters={"label": LABEL}):
        labels = container.labels
        started = float(labels.get(f"{LABEL}.started", "0"))
        mine = labels.get(f"{LABEL}.host") == host
        orphan = mine and not pid_alive(int(labels.get(f"{LABEL}.pid", "0") or 0))
        stale = max_age_s is not None and time.time() - started > max_age_s
        if orphan or stale:
            try:
                container.remove(force=True)
                removed.append(str(container.name))
            except docker.errors.NotFound:
                pass
    return removed


# bash prologue of every exec: kill every other process of the sandbox user (daemons and
# hooks of earlier steps) until none is left, with builtins only (a fork bomb may have used
# up the pids). `kill -1` spares the caller and the keep-alive, which runs as root and so
# cannot be signalled by the sandbox user; it reports success even when nothing of ours was
# left, so /proc tells when we are alone (`-O`: owned by us).
_ALONE = r"""_arena_others() {
  for _arena_p in /proc/[0-9]*; do
    [ "${_arena_p#/proc/}" != "$$" ] && [ -O "$_arena_p" ] && return 0
  done
  return 1
}
while _arena_others; do
  kill -9 -1 2>/dev/null
  [ "$SECONDS" -lt 20 ] || { echo "arena: cannot stop the processes left running" >&2; exit 125; }
done
unset -f _arena_others; unset _arena_p
"""

# read a regular file without following symlinks: every component is checked while no other
# process of the sandbox user is alive (the prologue killed them), so nothing can swap it
_READ_FILE = r"""set -f; IFS=/; here=""
for part in ${1#/}; do
  here="$here/$part"
  if [ -L "$here" ]; then echo "symlink $here" >&2; exit 3; fi
done
[ -e "$1" ] || { echo missing >&2; exit 4; }
[ -f "$1" ] || { echo "not a regular file" >&2; exit 5; }
size=$(stat -c %s -- "$1")
[ "$size" -le "$2" ] || { echo "size $size" >&2; exit 6; }
exec head -c "$2" -- "$1"
"""


_ENGINE_CPUS: dict[str, int] = {}


def engine_cpus(client: docker.DockerClient) -> int:
    """The CPU count of the engine's host (not ours: DOCKER_HOST may be elsewhere), asked once."""
    url = str(client.api.base_url)
    if url not in _ENGINE_CPUS:
        try:
            _ENGINE_CPUS[url] = int(client.info().get("NCPU") or 1)
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot ask the engine for its CPU count: {exc}") from exc
    return _ENGINE_CPUS[url]


def sandbox_cpus(limits: Limits, host_cpus: int) -> float:
    """Never every core of the engine's host: something must be left for everything else."""
    ceiling = max(host_cpus - 1.0, host_cpus / 2)
    return min(limits.cpus, ceiling)


def _raw(sock: Any) -> socket.socket:
    """The socket under what `exec_start(socket=True)` returns (unix, TCP or TLS)."""
    return getattr(sock, "_sock", sock)  # type: ignore[no-any-return]


class _SocketWriter(io.RawIOBase):
    """A write-only file over a socket, for streaming a tar archive into an exec's stdin."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self._sock.sendall(data)
        return len(data)


class DockerSandbox(Sandbox):
    """A container with no network, no capabilities, a read-only root and hard limits.

    The workspace is a tmpfs of `disk_mb` (writes past it fail with ENOSPC) that the files are
    copied into through the engine, so the engine may run anywhere (DOCKER_HOST) and nothing
    the sandbox writes reaches the host's disk.
    """

    def __init__(
        self, client: docker.DockerClient, container: Container, *, as_root: bool = False
    ) -> None:
        """`as_root` only for environment builds (trusted setup steps, committed afterwards):
        every exec, copy and read then runs as root, and no leftover process is killed first,
        since root's `kill -1` would also stop the keep-alive. CI runs never pass it.
        """
        self._client = client
        self._container = container
        self._uid = 0 if as_root else sandbox_uid()
        self._prologue = "" if as_root else _ALONE
        self._dead = False
        self._closed = False

    @property
    def container_id(self) -> str:
        return str(self._container.id)

    @property
    def client(self) -> docker.DockerClient:
        return self._client

    @classmethod
    def start(cls, client: docker.DockerClient, image: str, limits: Limits) -> DockerSandbox:
        """A started sandbox of `image`; its root filesystem is read-only unless the image is
        an environment image, whose caches are written where they lie (see ENV_IMAGE_LABEL)."""
        uid = sandbox_uid()
        writable_root = _is_environment_image(client, image)
        cpus = sandbox_cpus(limits, engine_cpus(client))
        owned = f"nosuid,nodev,uid={uid},gid={uid}"
        # workspace files live in memory, charged to the container: give them their own room
        memory = f"{limits.memory_mb + limits.disk_mb}m"
        try:
            container = client.containers.create(
                image,
                # the keep-alive runs as root: the sandbox user cannot signal it
                command=["sleep", str(int(limits.run_timeout_s) + 120)],
                detach=True,
                init=True,
                network_mode="none",
                user="0:0",
                read_only=not writable_root,
                tmpfs={
                    "/tmp": f"rw,exec,nosuid,nodev,size={limits.tmpfs_mb}m,mode=1777",
                    SANDBOX_HOME: f"rw,exec,{owned},size={limits.tmpfs_mb}m,mode=0700",
                    WORKSPACE: f"rw,exec,{owned},size={limits.disk_mb}m,mode=0755",
                },
                cap_drop=["ALL"],
                security_opt=["no-new-privileges", f"seccomp={seccomp_profile()}"],
                nano_cpus=int(cpus * 1e9),
                mem_limit=memory,
                memswap_limit=memory,
                pids_limit=limits.pids,
                log_config=LogConfig(type="none"),  # PID 1's output must not reach the host
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

    def _exec_create(self, argv: list[str], **options: Any) -> str:
        if self._dead:
            raise SandboxDied("the sandbox was killed; start a new one")
        try:
            return str(
                self._client.api.exec_create(
                    self.container_id, argv, user=f"{self._uid}:{self._uid}", **options
                )["Id"]
            )
        except docker.errors.APIError as exc:
            if exc.status_code == 409 or not self._running():  # not running: it died
                self._dead = True
                raise SandboxDied(f"the sandbox stopped: {exc.explanation}") from exc
            raise SandboxError(f"cannot exec in the sandbox: {exc}") from exc
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot exec in the sandbox: {exc}") from exc

    def _exit_code(self, exec_id: str) -> int | None:
        try:
            code = self._client.api.exec_inspect(exec_id).get("ExitCode")
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot read the exit code of a step: {exc}") from exc
        return None if code is None else int(code)

    def _running(self) -> bool:
        try:
            self._container.reload()
        except docker.errors.NotFound:
            return False
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot inspect the sandbox container: {exc}") from exc
        return bool(self._container.status == "running")

    def exec(
        self,
        command: str,
        *,
        env: dict[str, str],
        workdir: str,
        timeout_s: float,
        max_output_bytes: int,
    ) -> ExecResult:
        started = time.monotonic()
        since = int(time.time()) - 1
        script = self._prologue + 'exec bash --noprofile --norc -eo pipefail -c "$1"'
        exec_id = self._exec_create(
            ["bash", "--noprofile", "--norc", "-c", script, "arena-step", command],
            stdout=True,
            stderr=True,
            environment=env,
            workdir=workdir,
        )
        try:
            stream = self._client.api.exec_start(exec_id, stream=True, demux=False)
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
        exit_code = None if timed_out else self._exit_code(exec_id)
        died = False
        if not timed_out and (exit_code is None or exit_code >= 128) and not self._running():
            died = self._dead = True  # only the code inside can have stopped it
        elif failure and exit_code is None and not timed_out:
            raise SandboxError(f"lost the output stream of a step: {failure[0]}")
        oom = exit_code == _KILLED_BY_SIGKILL and self._oom_since(since)
        return ExecResult(
            exit_code=exit_code,
            output=buffer.text(),
            truncated=buffer.truncated,
            timed_out=timed_out,
            oom_killed=oom,
            duration_s=duration,
            sandbox_died=died,
        )

    def write_tree(self, source: Path, destination: str) -> None:
        def pack(stdin: io.RawIOBase) -> None:
            with tarfile.open(fileobj=stdin, mode="w|", format=tarfile.PAX_FORMAT) as tar:
                tar.add(str(source), arcname=".", filter=_anonymous)

        self._write(destination, pack, f"copy {source} into the sandbox")

    def write_file(self, path: str, data: bytes, mode: int = 0o644) -> None:
        directory, name = posixpath.split(path)

        def pack(stdin: io.RawIOBase) -> None:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = mode
            with tarfile.open(fileobj=stdin, mode="w|", format=tarfile.PAX_FORMAT) as tar:
                tar.addfile(info, io.BytesIO(data))

        self._write(directory or "/", pack, f"write {path} in the sandbox")

    def _write(self, destination: str, pack: Callable[[io.RawIOBase], None], what: str) -> None:
        """Stream a tar archive into `tar -x` run as the sandbox user, through the engine."""
        script = self._prologue + 'mkdir -p -- "$1" && exec tar -x --no-same-owner -f - -C "$1"'
        exec_id = self._exec_create(
            ["bash", "--noprofile", "--norc", "-c", script, "arena-copy", destination],
            stdin=True,
            stdout=True,
            stderr=True,
        )
        try:
            handle = self._client.api.exec_start(exec_id, socket=True)
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot {what}: {exc}") from exc
        sock = _raw(handle)
        broken: OSError | None = None
        try:
            try:
                pack(_SocketWriter(sock))
            except OSError as exc:  # tar stopped reading: its message says why
                broken = exc
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_WR)
            frames = frames_iter(handle, tty=False)  # type: ignore[no-untyped-call]
            messages = b"".join(data for stream, data in frames if stream == STDERR)
        finally:
            handle.close()
        code = self._exit_code(exec_id)
        if code != 0 or broken is not None:
            detail = messages.decode("utf-8", errors="replace").strip()[-1000:]
            if "No space left" in detail:
                raise SandboxFileError(f"cannot {what}: it does not fit the disk limit")
            raise SandboxError(f"cannot {what} (exit {code}): {detail or broken}")

    def read_file(self, path: str, max_bytes: int) -> bytes:
        if self._dead:
            raise SandboxFileError(f"cannot read {path}: the sandbox was killed")
        exec_id = self._exec_create(
            [
                "bash",
                "--noprofile",
                "--norc",
                "-c",
                self._prologue + _READ_FILE,
                "arena-read",
                path,
                str(max_bytes),
            ],
            stdout=True,
            stderr=True,
        )
        try:
            out, err = self._client.api.exec_start(exec_id, demux=True)
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot read {path} from the sandbox: {exc}") from exc
        code = self._exit_code(exec_id)
        detail = (err or b"").decode("utf-8", errors="replace").strip()
        if code == 0:
            return bytes(out or b"")
        if code == 3:
            raise SandboxFileError(f"{path} is not a regular file ({detail})")
        if code == 4:
            raise SandboxFileError(f"no file at {path}")
        if code == 5:
            raise SandboxFileError(f"{path} is not a regular file")
        if code == 6:
            size = detail.removeprefix("size ")
            raise SandboxFileError(f"{path} is {size} bytes, over {max_bytes}")
        raise SandboxError(f"cannot read {path} from the sandbox (exit {code}): {detail}")

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


def _is_environment_image(client: docker.DockerClient, image: str) -> bool:
    """Whether `image` is an environment image: its build left nothing but its cache directory
    writable by the sandbox user, so a writable root layer lets a run change its warm caches
    copy-on-write, file by file, where a volume would copy all of them first."""
    try:
        labels = client.images.get(image).labels or {}
    except docker.errors.ImageNotFound as exc:
        raise SandboxError(f"CI image {image} is missing: build it with `arena ci images`") from exc
    except ENGINE_ERRORS as exc:
        raise SandboxError(f"cannot inspect the CI image {image}: {exc}") from exc
    return ENV_IMAGE_LABEL in labels


def _anonymous(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """Entries carry no host user or group: the sandbox user owns what it extracts."""
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def start_beside(
    client: docker.DockerClient,
    job: DockerSandbox,
    image: str,
    *,
    environment: dict[str, str],
    memory_mb: int,
    pids: int = 512,
) -> Container:
    """A started service container (a database of the job's `services:`) in the network
    namespace of the `job` container: the job reaches it at localhost, and it reaches no more
    than the job does (a CI run's loopback only). Labelled as a sandbox, so that a sweep
    removes it when its owner is gone; its user is the image's, with no capability."""
    memory = f"{memory_mb}m"
    try:
        container = client.containers.create(
            image,
            detach=True,
            init=True,
            network_mode=f"container:{job.container_id}",
            environment=environment,
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            mem_limit=memory,
            memswap_limit=memory,
            pids_limit=pids,
            log_config=LogConfig(type="json-file", config={"max-size": "1m"}),
            tmpfs={"/tmp": "rw,nosuid,nodev,size=64m,mode=1777"},
            labels=_labels(),
        )
    except docker.errors.ImageNotFound as exc:
        raise SandboxError(f"service image {image} is missing") from exc
    except ENGINE_ERRORS as exc:
        raise SandboxError(f"cannot create a service container: {exc}") from exc
    try:
        container.start()
    except BaseException as exc:
        with contextlib.suppress(*ENGINE_ERRORS):
            container.remove(force=True, v=True)
        if isinstance(exc, ENGINE_ERRORS):
            raise SandboxError(f"cannot start a service container: {exc}") from exc
        raise
    return container
