"""The bounded writable layer of an environment image's caches: an overlay volume over the
image's layers that hold them (its own, and the repository layer's below it where it was
built on one) whose upper half lies on a tmpfs of `disk_mb`, kept mounted by a keeper.

Every piece is made and mounted by the engine (`local` volumes), with no capability for the
sandbox, and every host path comes from the engine itself (the image's layer, the tmpfs
volume's mountpoint), so it works as well when the runner is in a container of its own
(compose) or the engine is remote. A write past the tmpfs fails with ENOSPC; a copy-up of
a cached file counts against it as well. The pieces carry the sandbox's labels, so a sweep
removes them once their owner is gone.
"""

from __future__ import annotations

import contextlib
import secrets
import time
from concurrent.futures import Future, wait
from typing import Any

import docker
import docker.errors
from docker.models.containers import Container
from docker.types import LogConfig, Mount

from ci_runner.background import in_background
from ci_runner.errors import SandboxError
from ci_runner.image_layout import ENV_CACHE_DIR, ENV_CACHE_LAYERS_LABEL
from ci_runner.providers.docker.engine import ENGINE_ERRORS

KEEPER_MOUNT = "/arena-layer"  # where the keeper sees the tmpfs: upper and work dirs in it
_UPPER, _WORK = "upper", "work"
_LAYERED_DRIVER = "overlay2"  # the storage driver whose image layers are plain directories
_READY_S = 5.0  # how long the keeper may take to make its two directories
_FULL_FRACTION = 0.01  # less than this left (and at least a MiB): the layer is full


class CacheLayerUnavailable(SandboxError):
    """The engine gives no directory of the image's own layer to put the overlay over."""


def cache_lower_dirs(image: dict[str, Any], path: str) -> str:
    """The host directories (as the engine sees them) of `path` in the image's layers that
    hold it, top first, as overlay's `lowerdir` takes them.

    An environment image is one committed build container over a toolchain image that has
    no `path`, or one over a repository layer that is such an image: `path` lies in its top
    layer, or in its top two (ENV_CACHE_LAYERS_LABEL), the layer below holding the caches
    of the task the repository layer was built for.
    """
    driver = image.get("GraphDriver") or {}
    data = driver.get("Data") or {}
    upper = data.get("UpperDir")
    if driver.get("Name") != _LAYERED_DRIVER or not isinstance(upper, str) or ":" in upper:
        raise CacheLayerUnavailable(
            f"the engine's storage driver ({driver.get('Name') or 'unknown'}) gives no "
            f"directory of an image's layer: CI runs from environment images need the "
            f"{_LAYERED_DRIVER} driver, which bounds what they write to their caches"
        )
    labels = (image.get("Config") or {}).get("Labels") or {}
    count = int(labels.get(ENV_CACHE_LAYERS_LABEL) or 1)
    lower = [d for d in str(data.get("LowerDir") or "").split(":") if d]
    if len(lower) < count - 1:
        raise CacheLayerUnavailable(
            f"the image says {count} of its layers hold its caches, and has {len(lower) + 1}"
        )
    return ":".join(f"{d.rstrip('/')}/{path.strip('/')}" for d in [upper, *lower[: count - 1]])


def is_full(available_bytes: int, size_bytes: int) -> bool:
    """Whether a layer of `size_bytes` with `available_bytes` left refused a write for lack
    of room: a writer that hit ENOSPC leaves less than a block, a copy-up less than its file."""
    return available_bytes < max(size_bytes * _FULL_FRACTION, 1 << 20)


class CacheLayer:
    """A tmpfs volume of `size_mb`, a keeper container that holds it mounted (the engine
    mounts a volume only for a container) and makes the upper and work directories in it,
    and the overlay volume to mount at the caches."""

    def __init__(
        self, client: docker.DockerClient, upper_volume: str, size_mb: int, name: str
    ) -> None:
        self._client = client
        self._upper_volume = upper_volume
        self._size_mb = size_mb
        self.name = name  # the overlay volume's
        self._keeper: Container | None = None
        self._keeper_started: Future[None] | None = None
        self._overlay: str | None = None
        self._removed = False

    @property
    def size_mb(self) -> int:
        return self._size_mb

    @classmethod
    def create(
        cls,
        client: docker.DockerClient,
        image: str,
        lower_dir: str,
        *,
        size_mb: int,
        uid: int,
        lifetime_s: float,
        labels: dict[str, str],
        security_opt: list[str],
    ) -> CacheLayer:
        """Its tmpfs volume and its overlay volume over `lower_dir`, and its keeper (from
        `image`, as `uid`) starting meanwhile: create the container to mount the overlay in
        (the volume exists), then start it with `start_with`, which waits for the keeper."""
        base = f"arena-ci-{secrets.token_hex(8)}"
        options = f"size={size_mb}m,uid={uid},gid={uid},mode=0755,nosuid,nodev"
        try:
            upper = client.api.create_volume(
                f"{base}-upper",
                driver="local",
                driver_opts={"type": "tmpfs", "device": "tmpfs", "o": options},
                labels=labels,
            )
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot create the sandbox's cache layer: {exc}") from exc
        layer = cls(client, str(upper["Name"]), size_mb, f"{base}-cache")
        try:
            mountpoint = str(upper["Mountpoint"]).rstrip("/")
            overlay = (  # no set-uid program and no device node of the code's counts there
                f"lowerdir={lower_dir},upperdir={mountpoint}/{_UPPER},workdir={mountpoint}/{_WORK}"
                ",nosuid,nodev"
            )
            client.api.create_volume(
                layer.name,
                driver="local",
                driver_opts={"type": "overlay", "device": "overlay", "o": overlay},
                labels=labels,
            )
            layer._overlay = layer.name
            layer._keeper_started = in_background(
                lambda: layer._start_keeper(image, uid, lifetime_s, labels, security_opt),
                f"{layer.name}-keeper",
            )
        except BaseException as exc:
            with contextlib.suppress(SandboxError):
                layer.remove()
            if isinstance(exc, ENGINE_ERRORS):
                raise SandboxError(f"cannot create the sandbox's cache layer: {exc}") from exc
            raise
        return layer

    def _start_keeper(
        self,
        image: str,
        uid: int,
        lifetime_s: float,
        labels: dict[str, str],
        security_opt: list[str],
    ) -> None:
        # the tmpfs belongs to the sandbox user: so do the upper dir, the caches' root
        script = f'mkdir "$1/{_UPPER}" "$1/{_WORK}" && exec sleep "$2"'
        self._keeper = self._client.containers.create(
            image,
            command=["sh", "-c", script, "arena-keeper", KEEPER_MOUNT, str(int(lifetime_s))],
            detach=True,
            network_mode="none",
            user=f"{uid}:{uid}",
            read_only=True,
            mounts=[Mount(KEEPER_MOUNT, self._upper_volume, type="volume", no_copy=True)],
            cap_drop=["ALL"],
            security_opt=security_opt,
            mem_limit="16m",
            pids_limit=8,
            log_config=LogConfig(type="none"),
            labels=labels,
        )
        self._keeper.start()  # a failure is raised by _keeper_up, in the thread that waits

    def _keeper_up(self) -> None:
        """Wait for the keeper's start; raise SandboxError if it failed."""
        failed = None if self._keeper_started is None else self._keeper_started.exception()
        if failed is not None:
            raise SandboxError(
                f"cannot start the sandbox's cache layer keeper: {failed}"
            ) from failed

    @property
    def mount(self) -> Mount:
        """The overlay volume at the caches, for the sandbox's `mounts` (`no_copy`: the
        engine must not fill it from the image, the overlay shows the image's caches)."""
        return Mount(ENV_CACHE_DIR, self.name, type="volume", no_copy=True)

    def _keeper_exec(self, argv: list[str]) -> tuple[int | None, bytes]:
        if self._keeper is None:
            return None, b""
        api = self._client.api
        exec_id = api.exec_create(self._keeper.id, argv)["Id"]
        output = api.exec_start(exec_id)
        return api.exec_inspect(exec_id).get("ExitCode"), bytes(output or b"")

    def ready(self) -> bool:
        """Whether the keeper has made the upper and work directories."""
        script = f'test -d "$1/{_UPPER}" && test -d "$1/{_WORK}"'
        try:
            code, _ = self._keeper_exec(["sh", "-c", script, "arena-ready", KEEPER_MOUNT])
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot ask the sandbox's cache layer keeper: {exc}") from exc
        return code == 0

    def start_with(self, container: Container) -> None:
        """Start `container`, whose mounts include this layer, once the keeper is up. The
        engine refuses to mount the overlay until the keeper has made its directories (a
        moment after its start): then it is tried once more, and the engine's reason for a
        refusal that remains stands."""
        self._keeper_up()
        try:
            container.start()
            return
        except docker.errors.APIError as exc:
            if "no such file or directory" not in str(exc).lower():
                raise
        deadline = time.monotonic() + _READY_S
        while not self.ready() and time.monotonic() < deadline:
            time.sleep(0.02)
        container.start()

    def full(self) -> bool | None:
        """Whether the layer is full (a write past it failed); None when the keeper cannot
        say (it was stopped from outside)."""
        try:
            code, out = self._keeper_exec(["stat", "-f", "-c", "%a %S", KEEPER_MOUNT])
            free, block = (int(n) for n in out.split())
        except (*ENGINE_ERRORS, ValueError):
            return None
        if code != 0:
            return None
        return is_full(free * block, self._size_mb << 20)

    def remove_keeper(self) -> str | None:
        """Remove the keeper (the overlay mounted in the sandbox keeps the tmpfs alive, so the
        sandbox may still be going); what could not be removed, or None."""
        if self._keeper_started is not None:
            wait([self._keeper_started])  # its container, once created, is removed here
        keeper, self._keeper = self._keeper, None
        if keeper is None:
            return None
        try:
            keeper.remove(force=True, v=True)
        except docker.errors.NotFound:
            pass
        except ENGINE_ERRORS as exc:
            self._keeper = keeper
            return f"keeper container {keeper.id}: {exc}"
        return None

    def remove(self) -> None:
        """Remove the keeper, then both volumes (the sandbox using the overlay must be gone
        first); safe to call twice. Raises SandboxError naming what is left for the sweep."""
        if self._removed:
            return
        self._removed = True
        left = [problem for problem in (self.remove_keeper(),) if problem]
        for volume in (self._overlay, self._upper_volume):
            if volume is None:
                continue
            try:
                self._client.api.remove_volume(volume)
            except docker.errors.NotFound:
                pass
            except ENGINE_ERRORS as exc:
                left.append(f"volume {volume}: {exc}")
        if left:
            raise SandboxError(
                "cannot remove the sandbox's cache layer (`arena ci sweep` will once this "
                "process is gone): " + "; ".join(left)
            )
