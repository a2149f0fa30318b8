"""The Docker sandbox: one locked-down container per CI run, always removed.

Who stopped it, or a process the runner started in it, is read from the engine's facts:
its events (a `kill` sent through the engine, an `oom`), its state, its process count, and
whether a process of root's, which the sandbox user cannot signal, still starts in it.
"""

from __future__ import annotations

import contextlib
import io
import os
import posixpath
import socket
import tarfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import docker
import docker.errors
from docker.models.containers import Container
from docker.types import LogConfig
from docker.utils.socket import STDERR, frames_iter

from ci_runner.errors import SandboxError
from ci_runner.image_layout import (
    ENV_CACHE_DIR,
    ENV_IMAGE_LABEL,
    SANDBOX_HOME,
    SANDBOX_UID,
    WORKSPACE,
)
from ci_runner.owners import pid_alive
from ci_runner.providers.docker.cache_layer import CacheLayer, cache_lower_dirs
from ci_runner.providers.docker.engine import ENGINE_ERRORS
from ci_runner.providers.docker.seccomp import seccomp_profile
from ci_runner.sandbox.base import (
    ExecResult,
    Sandbox,
    SandboxDied,
    SandboxFileError,
    SandboxLost,
)
from ci_runner.sandbox.limits import OutputBuffer
from ci_runner.stops import StopCause
from ci_runner.tree_walk import walk
from ci_runner.types import Limits

LABEL = "arena.ci"
_KILLED_BY_SIGKILL = 137
_SIGNALLED = 128  # an exit status above: killed by signal (status - 128)
_RUNTIME_FAILED = 126  # with the engine's message: the runtime could not start the process
_RUNTIME_MESSAGE = "runtime exec failed"  # "OCI runtime exec failed: ..."
_GAVE_UP = 125  # the prologue (_ALONE) could not stop what the sandbox user left running
_GAVE_UP_MESSAGE = "arena: cannot stop the processes left running"  # what it then says
_SETTLE_S = 10.0  # how long a sandbox in which nothing starts may take to be seen stopped
_PIDS_SLACK = 4  # processes the runtime needs in the sandbox to start one there
_CLOCK_SLACK_S = 5.0  # events are asked for from a little earlier than our clock says


def sandbox_uid() -> int:
    """Root on the host runs the sandbox as the image's user; anyone else as themselves."""
    uid = os.geteuid()
    return SANDBOX_UID if uid == 0 else uid


# engine -> (the container this process runs in, when the engine last started it)
_OWNER_CONTAINER: dict[str, tuple[str, str] | None] = {}


def owner_container(client: docker.DockerClient) -> tuple[str, str] | None:
    """The id of the container on `client`'s engine this process runs in (a compose worker),
    and its start as the engine says it, or None: a sandbox it starts names both, so a sweep
    from any other process knows the owner gone once that container stopped or started again
    (compose restarts a killed worker as the same container; its pid means nothing outside)."""
    engine = str(client.api.base_url)
    if engine not in _OWNER_CONTAINER:
        found = None
        if os.path.exists("/.dockerenv"):
            with contextlib.suppress(*ENGINE_ERRORS):
                own = client.containers.get(socket.gethostname())
                if (own.attrs.get("Config") or {}).get("Hostname") == socket.gethostname():
                    found = (str(own.id), str((own.attrs.get("State") or {}).get("StartedAt")))
        _OWNER_CONTAINER[engine] = found
    return _OWNER_CONTAINER[engine]


def sandbox_labels(client: docker.DockerClient, lifetime_s: float | None = None) -> dict[str, str]:
    """Who owns a sandbox (host, process, its container) and, given its `lifetime_s`, the
    deadline after which any sweep removes it, whatever became of its owner."""
    now = time.time()
    labels = {
        LABEL: "1",
        f"{LABEL}.host": socket.gethostname(),
        f"{LABEL}.pid": str(os.getpid()),
        f"{LABEL}.started": str(int(now)),
    }
    if (owner := owner_container(client)) is not None:
        labels[f"{LABEL}.container"], labels[f"{LABEL}.container-started"] = owner
    if lifetime_s is not None:
        labels[f"{LABEL}.deadline"] = str(int(now + lifetime_s + _DEADLINE_GRACE_S))
    return labels


DISK_POLL_S = 0.25  # how often, at least, a build box's layer is sized (watch_disk)
_MIB = 1 << 20
_DEADLINE_GRACE_S = 120  # past its own lifetime (its cache layer's keeper lives 60 s more)
_KEEP_ALIVE_EXTRA_S = 120  # a sandbox's keep-alive outlives its run's time by this much


def _abandoned(
    labels: dict[str, str], host: str, max_age_s: float | None, running: dict[str, str]
) -> bool:
    """Whether what carries these labels lost its owner (its container on the engine stopped
    or started again since, or its process on this host died), is past its deadline, or is
    too old. `running` holds the engine's running containers and when each last started."""
    now = time.time()
    started = float(labels.get(f"{LABEL}.started", "0") or 0)
    deadline = float(labels.get(f"{LABEL}.deadline", "0") or 0)
    if (deadline and now > deadline) or (max_age_s is not None and now - started > max_age_s):
        return True
    container = labels.get(f"{LABEL}.container")
    if container:
        # compose restarts a killed worker as the same container: what the worker made
        # before its restart has no owner any more
        owner_started = running.get(container)
        if owner_started is None:
            return True
        made_under = labels.get(f"{LABEL}.container-started")
        return made_under is not None and made_under != owner_started
    mine = labels.get(f"{LABEL}.host") == host
    return mine and not pid_alive(int(labels.get(f"{LABEL}.pid", "0") or 0))


def _running_since(client: docker.DockerClient) -> dict[str, str]:
    """The engine's running containers, and when each last started (as the engine says it)."""
    since: dict[str, str] = {}
    for container in client.api.containers():
        cid = str(container["Id"])
        try:
            state = client.api.inspect_container(cid).get("State") or {}
        except docker.errors.NotFound:
            continue  # stopped and removed meanwhile: not running
        if state.get("Running"):
            since[cid] = str(state.get("StartedAt"))
    return since


def sweep_orphans(client: docker.DockerClient, *, max_age_s: float | None = None) -> list[str]:
    """Remove sandbox containers, then the volumes of their cache layers, whose owner is gone
    (a process of this host, or a container of this engine: a worker that crashed) or whose
    deadline has passed (or too old); returns the names of what it removed."""
    removed: list[str] = []
    host = socket.gethostname()
    running = _running_since(client)
    # the engine's listing as it is (no inspect per container: one removed meanwhile, by its
    # owner or another sweep, made the whole sweep fail with a 404)
    for container in client.api.containers(all=True, filters={"label": LABEL}):
        if _abandoned(dict(container.get("Labels") or {}), host, max_age_s, running):
            try:
                client.api.remove_container(container["Id"], force=True, v=True)
                names = container.get("Names") or [container["Id"][:12]]
                removed.append(str(names[0]).lstrip("/"))
            except docker.errors.NotFound:
                pass
            except docker.errors.APIError as exc:
                if exc.status_code != 409:  # 409: another sweep's removal is under way
                    raise
    for volume in client.api.volumes(filters={"label": LABEL}).get("Volumes") or []:
        if _abandoned(dict(volume.get("Labels") or {}), host, max_age_s, running):
            try:
                client.api.remove_volume(volume["Name"])
                removed.append(str(volume["Name"]))
            except docker.errors.NotFound:
                pass
            except docker.errors.APIError as exc:
                if exc.status_code != 409:  # 409: still in use by a container of a live owner
                    raise
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


# a sandbox's and a build's CPU weight: a quarter of a container's default (1024)
SANDBOX_CPU_SHARES = 256


def sandbox_cpus(limits: Limits, host_cpus: int) -> float:
    """The CPUs a sandbox may use: `limits.cpus`, at most the engine host's.

    What is left for everything else is the sandbox's CPU weight (`SANDBOX_CPU_SHARES`), not
    a core held back: a quota of all but one core idled that core whenever nothing else ran
    (a compiling run on a 2-core host took twice its time), and never held one back from
    two sandboxes at once; a low weight lets the engine's other containers and the host's
    services go first whenever they want the CPU, however many sandboxes run."""
    return min(limits.cpus, float(host_cpus))


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


@dataclass(frozen=True)
class Stop:
    """Who stopped a process of the runner's, or the sandbox, and what the engine said."""

    cause: StopCause
    down: bool  # the sandbox itself is no longer running
    how: str


@dataclass(frozen=True)
class StopFacts:
    """What the engine says of a sandbox once a process of the runner's ended oddly."""

    removed: bool  # the container is gone
    running: bool
    root_starts: bool  # a process of root's, which the sandbox user cannot signal, starts
    oom: bool  # an `oom` event since the runner's latest process, or the state's OOMKilled
    kills: tuple[str, ...]  # the signals of `kill` events since then: sent through the engine
    pids: tuple[int, int] | None  # (in use, limit) when too few are left to start a process
    covered: bool  # the events reach back to the creation of the runner's latest process
    exit_code: int | None = None  # the container's, once stopped


def judge_stop(facts: StopFacts) -> Stop:
    """Who stopped it, in this order (swing-protocol.md, "Faults").

    A `kill` sent through the engine, or the container's removal, is from outside: the
    sandbox user cannot signal the keep-alive, which runs as root. An `oom` is its memory
    limit, and no process starting while its process count is at its limit is its own
    processes' doing. While a process of root's still starts in it, only its own processes
    can have stopped the runner's. Stopped with no kill, in events that cover the runner's
    latest process, its own processes brought it down. Anything else: unknown.
    """
    if facts.kills:
        signals = ", ".join(sorted(set(facts.kills)))
        return Stop(StopCause.OUTSIDE, True, f"a kill (signal {signals}) sent through the engine")
    if facts.removed:
        return Stop(StopCause.OUTSIDE, True, "its container was removed through the engine")
    down = not facts.running
    if facts.oom:
        return Stop(StopCause.MEMORY, down, "its memory limit was exceeded")
    if facts.pids is not None and facts.running:
        used, limit = facts.pids
        return Stop(
            StopCause.PIDS,
            False,
            f"its own processes used up its process limit ({used} of {limit}): "
            "the runner's process could not start",
        )
    if facts.running and facts.root_starts:
        return Stop(
            StopCause.OWN_PROCESSES,
            False,
            "its own processes (left running by the code under test) stopped the runner's",
        )
    if facts.running:
        return Stop(
            StopCause.UNKNOWN, True, "no process starts in it, though none of its limits is hit"
        )
    if facts.covered:
        return Stop(
            StopCause.OWN_PROCESSES,
            True,
            f"it stopped (exit {facts.exit_code}) with no kill sent to it through the engine",
        )
    return Stop(
        StopCause.UNKNOWN,
        True,
        f"it stopped (exit {facts.exit_code}) and the engine's events no longer reach back "
        "to the runner's latest process",
    )


def _suspicious(code: int | None, text: str) -> bool:
    """An exit the runner's process may not have chosen itself: no status, a signal, a
    process the runtime could not start, or the prologue giving up on what was left running."""
    if code is None or code > _SIGNALLED:
        return True
    if code == _RUNTIME_FAILED:
        return _RUNTIME_MESSAGE in text[:2000]
    return code == _GAVE_UP and _GAVE_UP_MESSAGE in text


class DockerSandbox(Sandbox):
    """A container with no network, no capabilities, a read-only root and hard limits.

    The workspace is a tmpfs of `disk_mb` (writes past it fail with ENOSPC) that the files are
    copied into through the engine, so the engine may run anywhere (DOCKER_HOST) and nothing
    the sandbox writes reaches the host's disk. An environment image's caches are the one
    other place it writes: a CacheLayer of `disk_mb` in memory too, and a step that fails
    once it is full is stopped by its disk limit (StopCause.DISK), the code's fault.
    """

    def __init__(
        self,
        client: docker.DockerClient,
        container: Container,
        *,
        as_root: bool = False,
        layer: CacheLayer | None = None,
    ) -> None:
        """`as_root` only for environment builds (trusted setup steps, committed afterwards):
        every exec, copy and read then runs as root, and no leftover process is killed first,
        since root's `kill -1` would also stop the keep-alive. CI runs never pass it.
        `layer`: the cache layer mounted in `container`, removed with it.
        """
        self._client = client
        self._container = container
        self._layer = layer
        self._uid = 0 if as_root else sandbox_uid()
        self._prologue = "" if as_root else _ALONE
        self._down: Stop | None = None  # why no process can run here any more
        self._first_stop: StopCause | None = None
        # the runner's latest process: the engine's events from its creation on say who
        # stopped it or the sandbox (None: none yet, the container's start is the mark)
        self._mark: tuple[float, str | None] = (time.time(), None)
        self._closed = False
        # a limit the runner enforces by killing the box (its disk, see watch_disk): the
        # engine's events would show only a kill, and blame someone outside
        self._enforced: Stop | None = None
        self._closing = threading.Event()

    @property
    def container_id(self) -> str:
        return str(self._container.id)

    @property
    def client(self) -> docker.DockerClient:
        return self._client

    @property
    def stopped_by(self) -> StopCause | None:
        return self._first_stop

    @classmethod
    def start(
        cls, client: docker.DockerClient, image: str, limits: Limits, *, idle_s: float = 0.0
    ) -> DockerSandbox:
        """A started sandbox of `image` with a read-only root. An environment image's caches
        (see ENV_IMAGE_LABEL) get a writable layer of `disk_mb` over them (CacheLayer).
        `idle_s`: how long it may wait for its run (a spare) before the run's time begins."""
        uid = sandbox_uid()
        inspected = _inspect_image(client, image)
        labels = sandbox_labels(client, limits.run_timeout_s + idle_s + _KEEP_ALIVE_EXTRA_S)
        security_opt = ["no-new-privileges", f"seccomp={seccomp_profile()}"]
        cpus = sandbox_cpus(limits, engine_cpus(client))
        owned = f"nosuid,nodev,uid={uid},gid={uid}"
        # the workspace's files, and the cache layer's, live in memory, charged to the
        # container: give each its own room
        layer: CacheLayer | None = None
        if ENV_IMAGE_LABEL in ((inspected.get("Config") or {}).get("Labels") or {}):
            layer = CacheLayer.create(
                client,
                image,
                cache_lower_dirs(inspected, ENV_CACHE_DIR),
                size_mb=limits.disk_mb,
                uid=uid,
                # outlives the sandbox's keep-alive
                lifetime_s=limits.run_timeout_s + idle_s + _KEEP_ALIVE_EXTRA_S + 60,
                labels=labels,
                security_opt=security_opt,
            )
        memory = f"{limits.memory_mb + limits.disk_mb * (2 if layer else 1)}m"
        try:
            container = _create(
                client,
                image,
                # the keep-alive runs as root: the sandbox user cannot signal it
                command=["sleep", str(int(limits.run_timeout_s + idle_s + _KEEP_ALIVE_EXTRA_S))],
                detach=True,
                init=True,
                network_mode="none",
                user="0:0",
                read_only=True,
                mounts=[layer.mount] if layer else [],
                tmpfs={
                    "/tmp": f"rw,exec,nosuid,nodev,size={limits.tmpfs_mb}m,mode=1777",
                    SANDBOX_HOME: f"rw,exec,{owned},size={limits.tmpfs_mb}m,mode=0700",
                    WORKSPACE: f"rw,exec,{owned},size={limits.disk_mb}m,mode=0755",
                },
                cap_drop=["ALL"],
                security_opt=security_opt,
                nano_cpus=int(cpus * 1e9),
                cpu_shares=SANDBOX_CPU_SHARES,
                mem_limit=memory,
                memswap_limit=memory,
                pids_limit=limits.pids,
                log_config=LogConfig(type="none"),  # PID 1's output must not reach the host
                working_dir=WORKSPACE,
                environment={"HOME": SANDBOX_HOME, "CI": "true", "LANG": "C.UTF-8"},
                hostname="arena-ci",
                labels=labels,
            )
        except BaseException:
            if layer is not None:
                with contextlib.suppress(SandboxError):
                    layer.remove()
            raise
        sandbox = cls(client, container, layer=layer)
        try:
            if layer is not None:
                layer.start_with(container)
            else:
                container.start()
        except BaseException as exc:
            with contextlib.suppress(SandboxError):
                sandbox.close()
            if isinstance(exc, ENGINE_ERRORS):
                raise SandboxError(f"cannot start the sandbox container: {exc}") from exc
            raise
        return sandbox

    def _usable(self) -> None:
        """Raise if the sandbox is down: SandboxLost when that was not its own doing."""
        stop = self._down
        if stop is None:
            return
        if stop.cause.is_infrastructure:
            raise _lost(stop)
        raise SandboxDied(f"the sandbox is down ({stop.how}); start a new one", stop.cause)

    def _exec_create(self, argv: list[str], **options: Any) -> str:
        self._usable()
        created = time.time()
        try:
            exec_id = str(
                self._client.api.exec_create(
                    self.container_id, argv, user=f"{self._uid}:{self._uid}", **options
                )["Id"]
            )
        except docker.errors.APIError as exc:
            if exc.status_code in (404, 409) or not self._running():
                self._went_down(self._who_stopped())  # it is no longer running: who stopped it?
            raise SandboxError(f"cannot exec in the sandbox: {exc}") from exc
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot exec in the sandbox: {exc}") from exc
        self._mark = (created, exec_id)
        return exec_id

    def _start_failed(self, exc: BaseException, what: str) -> Stop:
        """An exec that was created but could not be started: the engine's fault, unless the
        sandbox stopped meanwhile (SandboxDied or SandboxLost) or the runtime could not start
        it because of the sandbox itself (the Stop, for the caller to report)."""
        if not self._running():
            self._went_down(self._who_stopped())
        if _RUNTIME_MESSAGE in str(exc):
            stop = self._stopped(self._who_stopped())
            if stop.down:
                raise SandboxDied(f"cannot {what}: {stop.how}", stop.cause) from exc
            return stop
        raise SandboxError(f"cannot {what}: {exc}") from exc

    def _exit_code(self, exec_id: str) -> int | None:
        """The exit status of an exec whose output has ended; None if it never had one."""
        deadline = time.monotonic() + _SETTLE_S
        while True:
            try:
                state = self._client.api.exec_inspect(exec_id)
            except docker.errors.NotFound as exc:
                # the exec went with its container (removed while the step ran): who did it?
                if not self._running():
                    self._went_down(self._who_stopped())
                raise SandboxError(f"cannot read the exit code of a step: {exc}") from exc
            except ENGINE_ERRORS as exc:
                raise SandboxError(f"cannot read the exit code of a step: {exc}") from exc
            code = state.get("ExitCode")
            if code is not None or not state.get("Running") or time.monotonic() > deadline:
                return None if code is None else int(code)
            time.sleep(0.1)  # its output ended a moment before the engine saw it exit

    def _state(self) -> dict[str, Any] | None:
        """The container's state as the engine reports it; None once it is removed."""
        try:
            return dict(self._client.api.inspect_container(self.container_id)["State"])
        except docker.errors.NotFound:
            return None
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot inspect the sandbox container: {exc}") from exc

    def _running(self) -> bool:
        state = self._state()
        return state is not None and bool(state.get("Running"))

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
        # one pipe for both streams, in the container: the engine carries stdout and stderr as
        # two streams whose order it does not keep, and under load a runner's stderr line
        # (cargo's `Running ...`) landed inside a test's stdout line (`test x ... ok`), so the
        # report lost that test (a tripwire: the run was judged forged) and the runner's count
        script = self._prologue + 'exec bash --noprofile --norc -eo pipefail -c "$1" 2>&1'
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
            stop = self._start_failed(exc, "exec in the sandbox")
            return ExecResult(
                exit_code=None,
                output=f"{exc}\n",
                truncated=False,
                timed_out=False,
                duration_s=time.monotonic() - started,
                stopped_by=stop.cause,
            )
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
        if reader.is_alive():
            self.kill()
            reader.join(10)
            return ExecResult(
                exit_code=None,
                output=buffer.text(),
                truncated=buffer.truncated,
                timed_out=True,
                duration_s=time.monotonic() - started,
            )
        duration = time.monotonic() - started
        exit_code = self._exit_code(exec_id)
        output = buffer.text()
        stopped: Stop | None = None
        if _suspicious(exit_code, output):
            if failure and exit_code is None and self._running():
                raise SandboxError(f"lost the output stream of a step: {failure[0]}")
            stopped = self._stopped(
                self._enforced or self._who_stopped(oom_grace=exit_code == _KILLED_BY_SIGKILL)
            )
        if stopped is None and exit_code != 0 and self._layer is not None and self._layer.full():
            stopped = Stop(StopCause.DISK, False, "a write past its cache layer's limit failed")
        return ExecResult(
            exit_code=exit_code,
            output=output,
            truncated=buffer.truncated,
            timed_out=False,
            duration_s=duration,
            sandbox_died=stopped is not None and stopped.down,
            stopped_by=None if stopped is None else stopped.cause,
        )

    def write_tree(self, source: Path, destination: str) -> None:
        def pack(stdin: io.RawIOBase) -> None:
            with tarfile.open(fileobj=stdin, mode="w|", format=tarfile.PAX_FORMAT) as tar:
                # entry by entry, never tarfile's recursion: a patch's tree may be 1,000 deep
                tar.add(str(source), arcname=".", recursive=False, filter=_anonymous)
                for top, subdirs, files in walk(source):
                    subdirs.sort()
                    inside = os.path.relpath(top, source)
                    for name in sorted(subdirs + files):
                        arcname = f"./{name}" if inside == "." else f"./{inside}/{name}"
                        path = os.path.join(top, name)
                        tar.add(path, arcname=arcname, recursive=False, filter=_anonymous)

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

    def write_files(self, root: str, files: Mapping[str, bytes]) -> None:
        entries = []
        for relative, data in files.items():
            name = posixpath.normpath(relative)
            if name.startswith(("/", "../")) or name in ("..", "."):
                raise ValueError(f"{relative!r} is not a path inside {root}")
            entries.append((name, data))
        now = time.time()

        def pack(stdin: io.RawIOBase) -> None:
            with tarfile.open(fileobj=stdin, mode="w|", format=tarfile.PAX_FORMAT) as tar:
                for name, data in entries:
                    info = tarfile.TarInfo(name)
                    info.size, info.mode, info.mtime = len(data), 0o644, now
                    tar.addfile(info, io.BytesIO(data))

        self._write(root, pack, f"write {len(entries)} files under {root} in the sandbox")

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
            stop = self._start_failed(exc, what)
            raise SandboxDied(f"cannot {what}: {stop.how}", stop.cause) from exc
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
            if code is None or code >= _GAVE_UP:
                stop = self._stopped(self._who_stopped())
                raise SandboxDied(f"cannot {what}: {stop.how}", stop.cause)
            raise SandboxError(f"cannot {what} (exit {code}): {detail or broken}")

    def read_file(self, path: str, max_bytes: int) -> bytes:
        try:
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
        except SandboxDied as exc:
            raise SandboxFileError(f"cannot read {path}: {exc}", exc.cause) from exc
        try:
            out, err = self._client.api.exec_start(exec_id, demux=True)
        except ENGINE_ERRORS as exc:
            try:
                stop = self._start_failed(exc, f"read {path} from the sandbox")
            except SandboxDied as died:
                raise SandboxFileError(f"cannot read {path}: {died}", died.cause) from exc
            raise SandboxFileError(f"cannot read {path}: {stop.how}", stop.cause) from exc
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
        if code is None or code >= _GAVE_UP:  # only the runtime or a signal ends it so
            stop = self._stopped(self._who_stopped())
            raise SandboxFileError(f"cannot read {path}: {stop.how}", stop.cause)
        raise SandboxError(f"cannot read {path} from the sandbox (exit {code}): {detail}")

    def _stopped(self, stop: Stop) -> Stop:
        """Record a stop: raise SandboxLost for one that is not the sandbox's own doing."""
        if stop.down or stop.cause.is_infrastructure:
            self._down = self._down or stop
        if stop.cause.is_infrastructure:
            raise _lost(stop)
        self._first_stop = self._first_stop or stop.cause
        return stop

    def _went_down(self, stop: Stop) -> NoReturn:
        self._stopped(stop)
        raise SandboxDied(f"the sandbox stopped: {stop.how}", stop.cause)

    def _who_stopped(self, *, oom_grace: bool = False) -> Stop:
        """Who stopped the runner's latest process or the sandbox: see `judge_stop`.

        `oom_grace` waits a second for an `oom` event, which the engine may log after the
        exit of the process the kernel killed.
        """
        root_starts = self._root_process_starts()
        state = self._state()
        pids: tuple[int, int] | None = None
        deadline = time.monotonic() + _SETTLE_S
        while not root_starts and state is not None and state.get("Running"):
            pids = self._pids_at_limit()  # nothing starts in it: its processes used them up?
            if pids is not None or time.monotonic() > deadline:
                break
            time.sleep(0.2)  # or it is being stopped: the engine logs a kill before that
            state = self._state()
        running = state is not None and bool(state.get("Running"))
        events = self._events(oom_grace and root_starts and running)
        _, mark = self._mark
        return judge_stop(
            StopFacts(
                removed=state is None,
                running=running,
                root_starts=root_starts,
                oom=bool(state and state.get("OOMKilled"))
                or any(e.get("Action") == "oom" for e in events),
                kills=tuple(
                    _attributes(e).get("signal", "?") for e in events if e.get("Action") == "kill"
                ),
                pids=pids,
                covered=any(
                    _attributes(e).get("execID") == mark
                    if mark is not None
                    else e.get("Action") == "start"
                    for e in events
                ),
                exit_code=None if state is None or running else state.get("ExitCode"),
            )
        )

    def _root_process_starts(self) -> bool:
        """Whether a process of root's, which the sandbox user cannot signal, starts and
        exits cleanly in the sandbox."""
        api = self._client.api
        try:
            probe = str(api.exec_create(self.container_id, ["true"], user="0:0")["Id"])
            api.exec_start(probe)
            return api.exec_inspect(probe).get("ExitCode") == 0
        except docker.errors.APIError:
            return False  # stopped, removed, paused, or the runtime failed
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot start a process in the sandbox: {exc}") from exc

    def _pids_at_limit(self) -> tuple[int, int] | None:
        """(processes, limit) when too few processes are left for the runtime to start one."""
        try:
            stats = self._client.api.stats(self.container_id, stream=False, one_shot=True)
        except ENGINE_ERRORS:
            return None
        pids = stats.get("pids_stats") or {}
        current, limit = int(pids.get("current") or 0), int(pids.get("limit") or 0)
        return (current, limit) if 0 < limit <= current + _PIDS_SLACK else None

    def _events(self, oom_grace: bool) -> list[dict[str, Any]]:
        """The engine's events of this container since the runner's latest process began.

        A kill is logged before the container is seen stopped, so once it is, nothing is
        missing; the `oom` of a process that survived is logged asynchronously.
        """
        created, _ = self._mark
        api: Any = self._client.api  # since and until in nanoseconds, which its types lack
        until = time.time() + (1.0 if oom_grace else 0.0)
        try:
            events = api.events(
                since=f"{created - _CLOCK_SLACK_S:.9f}",
                until=f"{until:.9f}",
                filters={"container": self.container_id},
                decode=True,
            )
            try:
                return [e for e in events if isinstance(e, dict)]
            finally:
                events.close()
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot read the engine's events: {exc}") from exc

    def kill(self) -> None:
        self._kill(Stop(StopCause.RUNNER, True, "the runner killed it"))

    def _kill(self, stop: Stop) -> None:
        self._down = self._down or stop
        self._closing.set()
        with contextlib.suppress(docker.errors.APIError):  # already stopped or gone: fine
            self._container.kill()

    def watch_disk(self, limit_mb: int) -> None:
        """Kill the box once its container's own layer holds more than `limit_mb` (the
        setup's fault, StopCause.DISK). A build box writes there, and what is written there
        becomes the image, so no tmpfs can hold it; and no size option bounds it on the usual
        engine storage (overlay2 on ext4). The engine is asked instead, on a thread, at least
        every DISK_POLL_S seconds: a writer overshoots the limit by what it writes between
        two asks (a build box's seccomp profile refuses `fallocate`, which took a file's
        whole size in one call)."""
        thread = threading.Thread(
            target=self._watch_disk, args=(limit_mb,), name="disk-watch", daemon=True
        )
        thread.start()

    def _watch_disk(self, limit_mb: int) -> None:
        wait_s = DISK_POLL_S
        while not self._closing.wait(wait_s):
            asked = time.monotonic()
            written = self._written_bytes()
            # the engine walks the layer to size it: a layer of many files is asked less
            # often, so that the watch takes at most a fifth of the engine's time
            wait_s = max(DISK_POLL_S, 4 * (time.monotonic() - asked))
            if written is not None and written > limit_mb * _MIB:
                stop = Stop(
                    StopCause.DISK,
                    True,
                    f"it wrote {written // _MIB} MiB outside its scratch folders, past its "
                    f"disk limit of {limit_mb} MiB",
                )
                self._enforced = stop
                self._kill(stop)
                return

    def _written_bytes(self) -> int | None:
        """What the container's own layer holds, as the engine sizes it; None if it cannot."""
        try:
            found = self._client.api.containers(
                all=True, filters={"id": self.container_id}, size=True
            )
        except ENGINE_ERRORS:
            return None
        return int(found[0].get("SizeRw") or 0) if found else None

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._closing.set()
        self._down = self._down or Stop(StopCause.RUNNER, True, "the runner removed it")
        layer = self._layer
        if layer is None:
            self._remove_container()
            return
        keeper = threading.Thread(target=layer.remove_keeper, daemon=True)
        keeper.start()  # at the same time as the container: the two take as long
        try:
            self._remove_container()
        finally:
            keeper.join()
            layer.remove()  # the volumes, once the container unmounted the overlay

    def _remove_container(self) -> None:
        try:
            self._container.remove(force=True, v=True)
        except docker.errors.NotFound:
            pass
        except docker.errors.APIError as exc:
            if exc.status_code != 409:  # 409: someone else's removal is under way
                raise SandboxError(
                    f"cannot remove sandbox container {self.container_id}: {exc}"
                ) from exc
        except ENGINE_ERRORS as exc:
            raise SandboxError(
                f"cannot remove sandbox container {self.container_id}: {exc}"
            ) from exc


def _lost(stop: Stop) -> SandboxLost:
    if stop.cause is StopCause.OUTSIDE:
        return SandboxLost(f"the sandbox was stopped from outside: {stop.how}", stop.cause)
    return SandboxLost(
        f"the sandbox failed and the engine cannot say who stopped it: {stop.how}", stop.cause
    )


def _attributes(event: dict[str, Any]) -> dict[str, str]:
    return dict((event.get("Actor") or {}).get("Attributes") or {})


def _inspect_image(client: docker.DockerClient, image: str) -> dict[str, Any]:
    """The engine's facts of `image`: its labels say whether it is an environment image, its
    storage driver's data where its own layer lies."""
    api: Any = client.api  # its inspect_image is untyped
    try:
        return dict(api.inspect_image(image))
    except docker.errors.ImageNotFound as exc:
        raise SandboxError(f"CI image {image} is missing: build it with `arena ci images`") from exc
    except ENGINE_ERRORS as exc:
        raise SandboxError(f"cannot inspect the CI image {image}: {exc}") from exc


def _create(client: docker.DockerClient, image: str, **options: Any) -> Container:
    try:
        return client.containers.create(image, **options)
    except docker.errors.ImageNotFound as exc:
        raise SandboxError(f"CI image {image} is missing: build it with `arena ci images`") from exc
    except ENGINE_ERRORS as exc:
        raise SandboxError(f"cannot create the sandbox container: {exc}") from exc


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
            labels=sandbox_labels(client),
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
