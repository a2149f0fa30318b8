"""Where untrusted pipeline steps run: one abstract interface, a Docker provider beside it."""

from ci_runner.sandbox.base import ExecResult, Sandbox, SandboxDied, SandboxFileError
from ci_runner.sandbox.docker import DockerSandbox, sweep_orphans
from ci_runner.sandbox.limits import OutputBuffer

__all__ = [
    "DockerSandbox",
    "ExecResult",
    "OutputBuffer",
    "Sandbox",
    "SandboxDied",
    "SandboxFileError",
    "sweep_orphans",
]
