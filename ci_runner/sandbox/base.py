"""The sandbox interface every provider implements: exec, files in and out, kill, close."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from ci_runner.errors import CIError, SandboxError


@dataclass(frozen=True)
class ExecResult:
    exit_code: int | None
    output: str
    truncated: bool
    timed_out: bool
    oom_killed: bool
    duration_s: float
    sandbox_died: bool = False


class SandboxFileError(CIError):
    """A file asked of the sandbox is missing, not a regular file, or too large."""


class SandboxDied(SandboxError):
    """The sandbox stopped under us; only the code inside can cause that, so it is its fault."""


class Sandbox(ABC):
    """A throwaway machine holding its own copy of the workspace; dead after a timeout.

    No host path is shared with it: files go in with `write_tree`/`write_file` and come out
    with `read_file`. Each `exec` and `read_file` first kills every process the sandboxed
    user left running, so a daemon of one step can never touch the next step or a report.
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
        """Run `command` with bash; on timeout the whole sandbox is killed."""

    @abstractmethod
    def write_tree(self, source: Path, destination: str) -> None:
        """Copy the host directory `source` into the sandbox at `destination`, owned by its user."""

    @abstractmethod
    def write_file(self, path: str, data: bytes, mode: int = 0o644) -> None:
        """Create or replace the file `path` inside the sandbox, owned by its user."""

    @abstractmethod
    def read_file(self, path: str, max_bytes: int) -> bytes:
        """The bytes of the regular file `path`, reached without following any symlink.

        Raises SandboxFileError when it is missing, not a regular file or over `max_bytes`.
        """

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
