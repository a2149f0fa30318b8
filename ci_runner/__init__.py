"""Sandboxed CI runs: check out a commit, apply diffs, run pipeline steps in a container.

This package knows nothing of models or matches; `arena` talks to it only through the names
below (`CIRequest` -> `CIResult` for a run; workspaces, environment builds, workflow
derivation, diffs and tripwire checks for the rest), never through its modules: the layering
test holds it to that, so what `arena` relies on is this list.

The names below are loaded on first use (`ci_runner.lazy`): importing `ci_runner.languages` or
`ci_runner.errors` must not load the Docker client, git bindings and settings machinery the
runner needs (about 0.4 s of every `arena` command that never runs CI).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ci_runner.lazy import lazy_attributes

if TYPE_CHECKING:
    from ci_runner.conda_channels import channel_unreachable
    from ci_runner.config import CISettings
    from ci_runner.diff_text import FileDiff, check_text, normalize_diff, read_diff
    from ci_runner.environments import EnvironmentBuilder, EnvironmentSpec
    from ci_runner.errors import (
        CIError,
        CommitMissing,
        EnvironmentBuildError,
        ImageError,
        PatchError,
        ReportError,
        SandboxError,
        WorkspaceError,
    )
    from ci_runner.git_mirrors import github_slug
    from ci_runner.image_names import ForeignImage, require_arena_image
    from ci_runner.images import ImageBuilder
    from ci_runner.languages import LANGUAGE_FOLDERS, LanguageProfile, profile_of
    from ci_runner.lazy import lazy_attributes
    from ci_runner.locks import file_lock
    from ci_runner.outcome import LIMITS_HINT
    from ci_runner.patches import parse_diff
    from ci_runner.pipeline import Pipeline, ReportSpec, Step
    from ci_runner.providers import provider_for
    from ci_runner.runner import CIRunner
    from ci_runner.toolchains import request_files, toolchain_choice
    from ci_runner.tripwires import expected_sites, missing_tripwire
    from ci_runner.types import (
        RESULT_RULES,
        CIRequest,
        CIResult,
        CIStatus,
        Limits,
        StepResult,
        TestOutcome,
        TripwireSite,
        TwinResult,
    )
    from ci_runner.workflows import DerivedJobs, JobRef, WorkflowError, derive_pipelines
    from ci_runner.workflows.legs import ANY_JOB
    from ci_runner.workflows.refusals import Refusal, refusal_of
    from ci_runner.workspace import Workspaces

_HOMES = {
    "file_lock": "ci_runner.locks",
    "LANGUAGE_FOLDERS": "ci_runner.languages",
    "RESULT_RULES": "ci_runner.types",
    "ANY_JOB": "ci_runner.workflows.legs",
    "CommitMissing": "ci_runner.errors",
    "DerivedJobs": "ci_runner.workflows",
    "EnvironmentBuildError": "ci_runner.errors",
    "EnvironmentBuilder": "ci_runner.environments",
    "EnvironmentSpec": "ci_runner.environments",
    "FileDiff": "ci_runner.diff_text",
    "ForeignImage": "ci_runner.image_names",
    "ImageBuilder": "ci_runner.images",
    "JobRef": "ci_runner.workflows",
    "LanguageProfile": "ci_runner.languages",
    "Refusal": "ci_runner.workflows.refusals",
    "WorkflowError": "ci_runner.workflows",
    "WorkspaceError": "ci_runner.errors",
    "Workspaces": "ci_runner.workspace",
    "channel_unreachable": "ci_runner.conda_channels",
    "check_text": "ci_runner.diff_text",
    "derive_pipelines": "ci_runner.workflows",
    "expected_sites": "ci_runner.tripwires",
    "github_slug": "ci_runner.git_mirrors",
    "lazy_attributes": "ci_runner.lazy",
    "missing_tripwire": "ci_runner.tripwires",
    "normalize_diff": "ci_runner.diff_text",
    "parse_diff": "ci_runner.patches",
    "profile_of": "ci_runner.languages",
    "provider_for": "ci_runner.providers",
    "read_diff": "ci_runner.diff_text",
    "refusal_of": "ci_runner.workflows.refusals",
    "request_files": "ci_runner.toolchains",
    "require_arena_image": "ci_runner.image_names",
    "toolchain_choice": "ci_runner.toolchains",
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
    "ANY_JOB",
    "LANGUAGE_FOLDERS",
    "LIMITS_HINT",
    "RESULT_RULES",
    "CIError",
    "CIRequest",
    "CIResult",
    "CIRunner",
    "CISettings",
    "CIStatus",
    "CommitMissing",
    "DerivedJobs",
    "EnvironmentBuildError",
    "EnvironmentBuilder",
    "EnvironmentSpec",
    "FileDiff",
    "ForeignImage",
    "ImageBuilder",
    "ImageError",
    "JobRef",
    "LanguageProfile",
    "Limits",
    "PatchError",
    "Pipeline",
    "Refusal",
    "ReportError",
    "ReportSpec",
    "SandboxError",
    "Step",
    "StepResult",
    "TestOutcome",
    "TripwireSite",
    "TwinResult",
    "WorkflowError",
    "WorkspaceError",
    "Workspaces",
    "channel_unreachable",
    "check_text",
    "derive_pipelines",
    "expected_sites",
    "file_lock",
    "github_slug",
    "lazy_attributes",
    "missing_tripwire",
    "normalize_diff",
    "parse_diff",
    "profile_of",
    "provider_for",
    "read_diff",
    "refusal_of",
    "request_files",
    "require_arena_image",
    "toolchain_choice",
]


__getattr__ = lazy_attributes(__name__, _HOMES)
