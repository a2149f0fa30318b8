"""Why a job leg, or a whole `ci_name_list`, cannot give a pipeline: the refusal categories.

An import report counts refused lines by these strings, and the Tasks page shows them; they
are the `reason` of the `WorkflowError` that `derive_pipelines` raises, and the `category` of
each rejected `LegRecord`.
"""

from __future__ import annotations

from enum import StrEnum


class Refusal(StrEnum):
    WINDOWS_MACOS = "Windows or macOS only"  # every listed test leg runs on Windows or macOS
    CONDA = "needs conda"  # the Linux test leg sets up or runs conda/mamba
    # the same, on a machine that reaches no conda channel (`ci_runner.conda_channels`)
    CONDA_UNREACHABLE = "needs conda channels, unreachable from this machine"
    DOCKER = "needs Docker in the job"  # steps run docker/docker compose, or a private container
    # the Linux test leg runs on what another job built (`actions/download-artifact`)
    ARTIFACTS = "needs another job's artifacts"
    NO_TEST_JOB = "no test job"  # no listed or fallback leg runs anything testable
    UNUSABLE = "no usable CI job"  # the workflow cannot be read or expanded (bad YAML, matrix...)


def refusal_of(categories: list[Refusal], listed_test_like: list[Refusal | None]) -> Refusal:
    """The category a whole job list is refused under, from its rejected legs' categories.

    What the job would need comes first (conda, then Docker, then another job's artifacts:
    the leg would have run, in an environment Arena cannot make); then Windows/macOS when
    every listed leg that is not a lint/docs leg runs there (`listed_test_like` holds their
    categories, None for a kept leg); else there is no test job.
    """
    if Refusal.CONDA in categories:
        return Refusal.CONDA
    if Refusal.DOCKER in categories:
        return Refusal.DOCKER
    if Refusal.ARTIFACTS in categories:
        return Refusal.ARTIFACTS
    if listed_test_like and all(c is Refusal.WINDOWS_MACOS for c in listed_test_like):
        return Refusal.WINDOWS_MACOS
    if categories and all(c is Refusal.UNUSABLE for c in categories):
        return Refusal.UNUSABLE
    return Refusal.NO_TEST_JOB
