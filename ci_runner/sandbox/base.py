"""The sandbox interface every provider implements: exec, kill, close."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from types import TracebackType


@dataclass(frozen=True)
class ExecResult:
    exit_code: int | None
    output: str
    truncated: bool
    timed_out: bool
    oom_killed: bool
    duration_s: float


class Sandbox(ABC):
    """A throwaway machine with the workspace mounted; dead after a timeout."""

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
