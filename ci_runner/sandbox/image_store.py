"""Where images are kept: the image side of a sandbox provider.

Image builds (ci_runner.images), service images (ci_runner.services) and environment images'
upkeep (ci_runner.environments) ask the provider's ImageStore, never an engine SDK, so a
second provider (a Kubernetes cluster's registry, a remote engine) brings its own store beside
its sandboxes. The conformance suite (tests/ci_runner/sandbox/test_image_store_conformance.py)
runs against each registered provider's store.
"""

from __future__ import annotations

import io
import tarfile
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class StoredImage:
    """One image the store holds, with its sizes as the store counts them."""

    tags: tuple[str, ...]
    labels: Mapping[str, str] = field(default_factory=dict)
    size_bytes: int = 0  # with the layers it shares
    shared_bytes: int | None = None  # None when the store did not compute it
    containers: int = 0  # containers using it now


@dataclass(frozen=True)
class ImageUsage:
    """The store's images and the free space where it keeps them."""

    images: tuple[StoredImage, ...]
    data_root: str  # where the store keeps its data, as it names it
    free_bytes: int | None  # None when that place is not on this machine


class ImageStore(ABC):
    """Finds, pulls, imports, builds and removes images; engine faults raise ImageError."""

    @abstractmethod
    def image_id(self, name: str) -> str | None:
        """The id image `name` (a tag or an id) points to now, or None if it is not there."""

    @abstractmethod
    def pull(self, name: str) -> None:
        """Fetch image `name` from its registry."""

    @abstractmethod
    def import_rootfs(self, tarball: Path, name: str) -> None:
        """Make image `name` of the root file system in the tar file `tarball`."""

    @abstractmethod
    def build(self, tag: str, context: bytes, labels: Mapping[str, str]) -> Iterator[str]:
        """Build `tag` from `context` (a tar archive with a `Dockerfile` at its top), with the
        build network, yielding its log lines as they come."""

    @abstractmethod
    def remove(self, tag: str) -> bool:
        """Remove the tag; False when a container still uses it (it stays), True when it is
        gone (or was never there)."""

    @abstractmethod
    def usage(self) -> ImageUsage:
        """Every image with its sizes, and the free space of the store's data root."""


def build_context(dockerfile: str, files: Mapping[str, tuple[str, int]] | None = None) -> bytes:
    """A build context as `ImageStore.build` takes it: the Dockerfile and `files` (name: text
    and mode) at the top of a tar archive."""
    buffer = io.BytesIO()
    entries = {"Dockerfile": (dockerfile, 0o644), **(files or {})}
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, (text, mode) in entries.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = mode
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()
