"""Sandboxed CI runs: check out a commit, apply diffs, run pipeline steps in a container.

This package knows nothing of models or matches; `arena` talks to it only through
`CIRequest` -> `CIResult`.
"""

from ci_runner.config import CISettings
from ci_runner.errors import CIError, ImageError, PatchError, ReportError, SandboxError
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
)

__all__ = [
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
]
