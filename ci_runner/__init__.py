"""Sandboxed CI runs: check out a commit, apply diffs, run pipeline steps in a container.

This package knows nothing of models or matches; `arena` talks to it only through
`CIRequest` -> `CIResult`.

The names below are loaded on first use (`ci_runner.lazy`): importing `ci_runner.languages` or
`ci_runner.errors` must not load the Docker client, git bindings and settings machinery the
runner needs (about 0.4 s of every `arena` command that never runs CI).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ci_runner.lazy import lazy_attributes

if TYPE_CHECKING:
    from ci_runner.config import CISettings
    from ci_runner.errors import CIError, ImageError, PatchError, ReportError, SandboxError
    from ci_runner.outcome import LIMITS_HINT
    from ci_runner.pipeline import Pipeline, ReportSpec, Step
    from ci_runner.runner import CIRunner
    from ci_runner.types import (
        CIRequest,
        CIResult,
        CIStatus,
        Limits,
        StepResult,
        TestOutcome,
        TripwireSite,
        TwinResult,
    )

_HOMES = {
    "CISettings": "ci_runner.config",
    "CIError": "ci_runner.errors",
    "ImageError": "ci_runner.errors",
    "PatchError": "ci_runner.errors",
    "ReportError": "ci_runner.errors",
    "SandboxError": "ci_runner.errors",
    "Pipeline": "ci_runner.pipeline",
    "ReportSpec": "ci_runner.pipeline",
    "Step": "ci_runner.pipeline",
    "CIRunner": "ci_runner.runner",
    "CIRequest": "ci_runner.types",
    "CIResult": "ci_runner.types",
    "CIStatus": "ci_runner.types",
    "Limits": "ci_runner.types",
    "LIMITS_HINT": "ci_runner.outcome",
    "StepResult": "ci_runner.types",
    "TestOutcome": "ci_runner.types",
    "TripwireSite": "ci_runner.types",
    "TwinResult": "ci_runner.types",
}

__all__ = [
    "LIMITS_HINT",
    "CIError",
    "CIRequest",
    "CIResult",
    "CIRunner",
    "CISettings",
    "CIStatus",
    "ImageError",
    "Limits",
    "PatchError",
    "Pipeline",
    "ReportError",
    "ReportSpec",
    "SandboxError",
    "Step",
    "StepResult",
    "TestOutcome",
    "TripwireSite",
    "TwinResult",
]


__getattr__ = lazy_attributes(__name__, _HOMES)
