"""Where untrusted pipeline steps run: one abstract interface, a Docker provider beside it."""

from ci_runner.sandbox.base import (
    ExecResult,
    Sandbox,
    SandboxDied,
    SandboxFileError,
    SandboxLost,
)
from ci_runner.sandbox.docker import DockerSandbox, sweep_orphans
from ci_runner.sandbox.limits import OutputBuffer
from ci_runner.stops import StopCause

__all__ = [
    "DockerSandbox",
    "ExecResult",
    "OutputBuffer",
    "Sandbox",
    "SandboxDied",
    "SandboxFileError",
    "SandboxLost",
    "StopCause",
    "sweep_orphans",
]
