"""Where untrusted pipeline steps run: the interface every provider gives (`ci_runner.providers`
names them; Docker's is `ci_runner.providers.docker`).

The names below load on first use (`ci_runner.lazy`): the interface (`ci_runner.sandbox.base`)
must not load a provider's SDK, so a second provider (Kubernetes, a remote engine) can be
added and tested without Docker's client installed or imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ci_runner.lazy import lazy_attributes

if TYPE_CHECKING:
    from ci_runner.sandbox.base import (
        ExecResult,
        Sandbox,
        SandboxDied,
        SandboxFileError,
        SandboxLost,
    )
    from ci_runner.sandbox.limits import OutputBuffer
    from ci_runner.stops import StopCause

_HOMES = {
    "ExecResult": "ci_runner.sandbox.base",
    "OutputBuffer": "ci_runner.sandbox.limits",
    "Sandbox": "ci_runner.sandbox.base",
    "SandboxDied": "ci_runner.sandbox.base",
    "SandboxFileError": "ci_runner.sandbox.base",
    "SandboxLost": "ci_runner.sandbox.base",
    "StopCause": "ci_runner.stops",
}

__all__ = [
    "ExecResult",
    "OutputBuffer",
    "Sandbox",
    "SandboxDied",
    "SandboxFileError",
    "SandboxLost",
    "StopCause",
]

__getattr__ = lazy_attributes(__name__, _HOMES)
