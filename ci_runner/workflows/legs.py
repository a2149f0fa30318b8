"""A workflow's jobs as GitHub lists them: one leg per matrix combination, with its display name."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any

from ci_runner.workflows.expressions import (
    ExpressionError,
    PartialContext,
    Unsupported,
    interpolate,
    to_text,
)
from ci_runner.workflows.matrix import Combination, expand_matrix, leg_values_text

ANY_JOB = "*"  # an entry naming every job: the first Linux leg that runs tests is taken
_NOT_LINUX = ("windows", "macos", "osx", "darwin")


@dataclass(frozen=True)
class JobRef:
    """One `ci_name_list` entry: a job's display name (or id), and the workflow file if known."""

    name: str
    workflow: str | None = None

    def __str__(self) -> str:
        return f"{self.name} @ {self.workflow}" if self.workflow else self.name


@dataclass(frozen=True)
class Leg:
    workflow: str
    job_id: str
    job: dict[str, Any]
    matrix: Combination
    display_name: str
    runs_on: str

    def __str__(self) -> str:
        return f"{self.display_name!r} ({self.workflow} job {self.job_id})"


def static_contexts(github: dict[str, Any]) -> dict[str, Any]:
    """The contexts every expression of a derived pipeline may read (matrix and env come later)."""
    return {
        "runner": {
            "os": "Linux",
            "arch": "X64",
            "name": "arena",
            "temp": "/tmp",
            "tool_cache": "/opt/hostedtoolcache",
            "debug": "",
        },
        "github": PartialContext("github", github),
        "secrets": {},  # unset, as in a pull request from a fork
        "steps": {},  # skipped actions give no outputs
        "strategy": {"fail-fast": True, "job-index": 0, "job-total": 1, "max-parallel": 1},
    }


def _render(template: Any, contexts: dict[str, Any]) -> str:
    try:
        return interpolate(to_text(template), contexts)
    except (Unsupported, ExpressionError):
        return to_text(template)


def _runs_on(job: dict[str, Any], contexts: dict[str, Any]) -> str:
    value = job.get("runs-on")
    if isinstance(value, dict):
        value = value.get("labels", value.get("group", ""))
    if isinstance(value, list):
        return ", ".join(_render(v, contexts) for v in value)
    return _render(value if value is not None else "", contexts)


def is_linux(runs_on: str, job: dict[str, Any]) -> bool:
    lowered = runs_on.lower()
    if not lowered.strip():
        return True  # runs-on is required by GitHub; test fixtures often leave it out
    if any(word in lowered for word in _NOT_LINUX):
        return False
    return "ubuntu" in lowered or "linux" in lowered or "container" in job


def job_legs(
    workflow: str, job_id: str, job: dict[str, Any], contexts: dict[str, Any]
) -> list[Leg]:
    """Every leg of one job; raises Unsupported when its matrix cannot be expanded."""
    legs = []
    for combination in expand_matrix(job.get("strategy")):
        leg_contexts = {**contexts, "matrix": combination}
        name = job.get("name")
        if name is None:
            display = job_id
            values = leg_values_text(combination)
            if values:
                display = f"{job_id} ({values})"
        else:
            display = _render(name, leg_contexts)
            if "${{" not in to_text(name) and (values := leg_values_text(combination)):
                display = f"{display} ({values})"
        legs.append(
            Leg(
                workflow=workflow,
                job_id=job_id,
                job=job,
                matrix=combination,
                display_name=display,
                runs_on=_runs_on(job, leg_contexts),
            )
        )
    return legs


def same_workflow(named: str, path: str) -> bool:
    """`.github/workflows/ci.yml`, `./.github/workflows/ci.yml` and `ci.yml` name the same file."""
    named, path = posixpath.normpath(named), posixpath.normpath(path)
    return named == path or path.endswith(f"/{named}")


def _normal(name: str) -> str:
    return " ".join(name.split()).casefold()


def matches(leg: Leg, ref: JobRef) -> bool:
    """The entry names this leg: its display name, or the job (by id or name) as a whole."""
    if ref.workflow is not None and not same_workflow(ref.workflow, leg.workflow):
        return False
    wanted = _normal(ref.name)
    if wanted == ANY_JOB:
        return True
    if wanted == _normal(leg.display_name) or wanted == _normal(leg.job_id):
        return True
    name = leg.job.get("name")
    return name is not None and "${{" not in to_text(name) and wanted == _normal(to_text(name))
