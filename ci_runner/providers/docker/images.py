"""The Docker provider's image store: the images of one engine (local, or DOCKER_HOST)."""

from __future__ import annotations

import io
import random
import shutil
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import docker
import docker.errors

from ci_runner.errors import ImageError
from ci_runner.providers.docker.engine import ENGINE_ERRORS
from ci_runner.sandbox.image_store import ImageStore, ImageUsage, StoredImage

LOG_TAIL_LINES = 20  # of a failed build, in its error
_DF_BUSY = "a disk usage operation is already running"
_DF_PATIENCE_S = 300  # a big engine's df takes seconds, and several may queue


class DockerImageStore(ImageStore):
    def __init__(self, client: docker.DockerClient) -> None:
        self._client = client

    def image_id(self, name: str) -> str | None:
        try:
            return str(self._client.images.get(name).id)
        except docker.errors.ImageNotFound:
            return None
        except ENGINE_ERRORS as exc:
            raise ImageError(f"cannot inspect image {name}: {exc}") from exc

    def pull(self, name: str) -> None:
        try:
            self._client.images.pull(name)
        except ENGINE_ERRORS as exc:
            raise ImageError(f"cannot pull {name}: {exc}") from exc

    def import_rootfs(self, tarball: Path, name: str) -> None:
        repository, _, tag = name.rpartition(":") if ":" in name else (name, "", "latest")
        try:
            self._client.api.import_image_from_file(
                str(tarball), repository=repository, tag=tag or "latest"
            )
        except ENGINE_ERRORS as exc:
            raise ImageError(f"docker import of {name} failed: {exc}") from exc

    def build(self, tag: str, context: bytes, labels: Mapping[str, str]) -> Iterator[str]:
        tail: list[str] = []
        try:
            for chunk in self._client.api.build(
                fileobj=io.BytesIO(context),
                custom_context=True,
                tag=tag,
                network_mode="host",
                rm=True,
                forcerm=True,
                decode=True,
                labels=dict(labels),
            ):
                if "error" in chunk:
                    raise ImageError(
                        f"building {tag} failed: {chunk['error'].strip()}\n"
                        + "".join(tail[-LOG_TAIL_LINES:])
                    )
                line = str(chunk.get("stream", ""))
                if line.strip():
                    tail.append(line)
                    yield line.strip()
        except ENGINE_ERRORS as exc:
            raise ImageError(f"building {tag} failed: {exc}") from exc
        if self.image_id(tag) is None:
            raise ImageError(f"building {tag} finished without producing the image")

    def remove(self, tag: str) -> bool:
        try:
            self._client.images.remove(tag)
        except docker.errors.ImageNotFound:
            return True
        except docker.errors.APIError:  # in use by a container
            return False
        except ENGINE_ERRORS as exc:
            raise ImageError(f"cannot remove image {tag}: {exc}") from exc
        return True

    def usage(self) -> ImageUsage:
        """As `docker system df -v` counts it; the free space only when the engine runs here
        (a unix socket) and its data root is readable by us (not a remote engine, not Docker
        Desktop's VM)."""
        try:
            df = self._df()
            info = self._client.info()
        except ENGINE_ERRORS as exc:
            raise ImageError(f"cannot ask the engine for its disk usage: {exc}") from exc
        images = tuple(_stored(row) for row in df.get("Images") or [] if isinstance(row, dict))
        root = str(info.get("DockerRootDir") or "")
        return ImageUsage(images, root, self._local_free_bytes(root))

    def _df(self) -> dict[str, Any]:
        """`docker system df`, waiting its turn: the engine runs one at a time and refuses the
        others (500 "a disk usage operation is already running"), which two workers, or a
        build beside `arena tasks gc`, ask for at once. Given up after `_DF_PATIENCE_S`."""
        deadline = time.monotonic() + _DF_PATIENCE_S
        wait = 0.1
        while True:
            try:
                found: dict[str, Any] = self._client.df()
                return found
            except docker.errors.APIError as exc:
                if _DF_BUSY not in str(exc) or time.monotonic() + wait > deadline:
                    raise
            time.sleep(wait + random.uniform(0, wait))  # apart from the other waiters
            wait = min(wait * 2, 2.0)

    def _local_free_bytes(self, root: str) -> int | None:
        if not root or not str(self._client.api.base_url).startswith("http+docker://local"):
            return None
        try:
            return shutil.disk_usage(root).free
        except OSError:
            return None


def _stored(row: Mapping[str, object]) -> StoredImage:
    """One row of the engine's `/system/df` `Images`; a SharedSize of -1 means not computed."""
    labels = row.get("Labels")
    tags = row.get("RepoTags")
    shared = _int(row.get("SharedSize"), -1)
    return StoredImage(
        tags=tuple(str(t) for t in tags) if isinstance(tags, list) else (),
        labels={str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {},
        size_bytes=_int(row.get("Size")),
        shared_bytes=shared if shared >= 0 else None,
        containers=max(_int(row.get("Containers")), 0),
    )


def _int(value: object, default: int = 0) -> int:
    return value if isinstance(value, int) else default
