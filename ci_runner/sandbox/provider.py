"""Where sandboxes come from: the one seam between the runner (and environment builds) and
the engine that runs containers.

The runner and the environment builder ask a provider for sandboxes and talk to them only
through the Sandbox interface (exec, files in and out, kill, close); image builds and upkeep
go through its ImageStore; nothing above this seam names Docker. A second provider
(Kubernetes pods, a remote engine) implements this class with its own ImageStore, registers
under a name in `ci_runner.providers`, and runs the conformance suites
(tests/ci_runner/sandbox/test_sandbox_conformance.py, test_image_store_conformance.py),
which are parametrized over the registry.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import Protocol, Self

from ci_runner.pipeline import Service
from ci_runner.sandbox.base import Sandbox
from ci_runner.sandbox.image_store import ImageStore
from ci_runner.types import Limits


class BesideServices(Protocol):
    """The job's services running beside its sandbox; closing removes them."""

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


class SandboxProvider(ABC):
    """Starts CI sandboxes, environment build boxes and services, and keeps built images."""

    name: str  # its key in the registry (ARENA_SANDBOX_PROVIDER)

    @abstractmethod
    def ping(self) -> None:
        """Reach the provider's engine now; SandboxError (saying how to get one) when none
        answers. Every other call reaches it on first use anyway."""

    @abstractmethod
    def unreachable(self, timeout_s: int) -> str | None:
        """Why the engine this provider would run sandboxes on does not answer within
        `timeout_s`, or None when it does: a health check's probe, which must neither raise
        nor wait on an engine that accepts and stalls."""

    @property
    @abstractmethod
    def images(self) -> ImageStore:
        """Where this provider's sandboxes find their images, and builds keep theirs."""

    @property
    @abstractmethod
    def sandbox_uid(self) -> int:
        """The user id CI sandboxes run as: what an environment build hands its caches to."""

    @abstractmethod
    def start(self, image: str, limits: Limits, *, idle_s: float = 0.0) -> Sandbox:
        """A started CI sandbox of `image`: no network, no capabilities, `limits` enforced,
        every process as the unprivileged sandbox user. `idle_s`: how long it may wait for
        its run (a spare) before the run's time begins."""

    @abstractmethod
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
    ) -> Sandbox:
        """A box for an environment build's setup steps (a dataset line's commands): root
        with only the capabilities package managers need (no raw sockets, no network
        administration, no new privileges), at most `memory_mb` of memory and about `disk_mb`
        written outside its scratch folders, on `network`, with in-memory `scratch`
        directories (path: MiB) that a commit leaves out; it stops by itself after
        `lifetime_s` if its owner dies. `unset_env`: variables of the image's own (an
        environment image's offline switches) that the box's processes must not see."""

    @abstractmethod
    def commit(
        self, box: Sandbox, tag: str, *, changes: Sequence[str], labels: Mapping[str, str]
    ) -> None:
        """Keep what a build box's setup wrote as the image `tag` (Dockerfile-style
        `changes`: ENV, WORKDIR, CMD), labelled."""

    @abstractmethod
    def start_services(
        self,
        services: Mapping[str, Service],
        job: Sandbox,
        progress: Callable[[str], None],
    ) -> BesideServices:
        """The job's `services:` started where the job reaches them at localhost, and
        nothing more than the job does; each accepting connections when this returns."""

    @abstractmethod
    def sweep(self, max_age_s: float | None = None) -> list[str]:
        """Remove what this provider started for a process that is gone (or too old);
        SandboxError when the engine fails it."""
