"""The sandbox interface every provider implements: exec, files in and out, kill, close."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Self

from ci_runner.errors import CIError, SandboxError
from ci_runner.stops import StopCause


@dataclass(frozen=True)
class ExecResult:
    exit_code: int | None
    output: str
    truncated: bool
    timed_out: bool
    duration_s: float
    sandbox_died: bool = False
    stopped_by: StopCause | None = None
    """Set when the process was stopped, or could not start, because of the sandbox's own
    processes, memory or process limit, or failed once a write past its disk limit outside
    the workspace had failed; `sandbox_died` when the whole sandbox went down."""

    @property
    def oom_killed(self) -> bool:
        return self.stopped_by is StopCause.MEMORY


class SandboxFileError(CIError):
    """A file asked of the sandbox is missing, not a regular file, or too large, or the
    sandbox's own processes stopped the reading (`stopped_by`)."""

    def __init__(self, message: str, stopped_by: StopCause | None = None) -> None:
        super().__init__(message)
        self.stopped_by = stopped_by


class SandboxDied(CIError):
    """The sandbox is down because of its own processes, its limits or a timeout: the fault
    of the code under test, not of the infrastructure."""

    def __init__(self, message: str, cause: StopCause) -> None:
        super().__init__(message)
        self.cause = cause

    def __reduce__(self) -> tuple[type[Self], tuple[str, StopCause]]:
        return type(self), (str(self), self.cause)  # the cause survives pickling (Celery)


class SandboxLost(SandboxError):
    """The sandbox was stopped from outside, or the engine cannot say by whom: an
    infrastructure fault, retried and never scored or cached."""

    def __init__(self, message: str, cause: StopCause) -> None:
        super().__init__(message)
        self.cause = cause

    def __reduce__(self) -> tuple[type[Self], tuple[str, StopCause]]:
        return type(self), (str(self), self.cause)  # the cause survives pickling (Celery)


class Sandbox(ABC):
    """A throwaway machine holding its own copy of the workspace; dead after a timeout.

    No host path is shared with it: files go in with `write_tree`/`write_file` and come out
    with `read_file`. Each `exec` and `read_file` first kills every process the sandboxed
    user left running, so a daemon of one step can never touch the next step or a report.

    Who stops a sandbox or a process in it decides whose fault that is (see StopCause): its
    own processes, memory or process limit give a result (`ExecResult.stopped_by`) or raise
    SandboxDied or SandboxFileError; a stop from outside, or one the provider cannot explain
    from its engine's facts, raises SandboxLost, an infrastructure fault.
    """

    @abstractmethod
    def exec(
        self,
        command: str,
        *,
        env: dict[str, str],
        workdir: str,
        timeout_s: float,
        max_output_bytes: int,
    ) -> ExecResult:
        """Run `command` with bash; on timeout the whole sandbox is killed. Its output is
        stdout and stderr as one log in the order written, as a CI log shows them: reports
        are read from it, and a line split by another stream's loses its test."""

    @abstractmethod
    def write_tree(self, source: Path, destination: str) -> None:
        """Copy the host directory `source` into the sandbox at `destination`, owned by its user."""

    @abstractmethod
    def write_file(self, path: str, data: bytes, mode: int = 0o644) -> None:
        """Create or replace the file `path` inside the sandbox, owned by its user."""

    @abstractmethod
    def write_files(self, root: str, files: Mapping[str, bytes]) -> None:
        """Create or replace several files under the directory `root` in one go, owned by
        its user and stamped with the current time (build tools see them as changed).
        `files` maps paths relative to `root` (no `..`) to their bytes."""

    @abstractmethod
    def read_file(self, path: str, max_bytes: int) -> bytes:
        """The bytes of the regular file `path`, reached without following any symlink.

        Raises SandboxFileError when it is missing, not a regular file or over `max_bytes`.
        """

    @property
    @abstractmethod
    def stopped_by(self) -> StopCause | None:
        """What first stopped a process the runner started here, or the sandbox, because of
        the sandbox itself (its own processes or limits); None while nothing did."""

    @abstractmethod
    def kill(self) -> None:
        """Stop everything running inside at once; the sandbox cannot exec afterwards."""

    @abstractmethod
    def close(self) -> None:
        """Destroy the sandbox; safe to call twice and after a failure."""

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
