"""A workflow's jobs as GitHub lists them: one leg per matrix combination, with its display name."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ci_runner.workflows.expressions import (
    ExpressionError,
    OpenContext,
    Unsupported,
    interpolate,
    to_text,
)
from ci_runner.workflows.matrix import Combination, expand_matrix, leg_values_text

WORKSPACE = "/workspace"
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
    via: str | None = None  # the workflow whose job calls this one's (a reusable workflow)
    caller: str | None = None  # that calling job's display name
    inputs: dict[str, Any] = field(default_factory=dict)  # the call's `with:` and defaults
    # the jobs the calling jobs wait for (`needs:`): a called job runs after them too
    called_after: tuple[str, ...] = ()

    @property
    def runs_after_others(self) -> bool:
        """Some job of the run ends before this one starts (its `needs:`, or its caller's)."""
        return bool(needed_jobs(self.job) or self.called_after)

    def __str__(self) -> str:
        called = f" called by {self.caller} in {self.via}" if self.via else ""
        return f"{self.display_name!r} ({self.workflow} job {self.job_id}{called})"


def needed_jobs(job: Mapping[str, Any]) -> tuple[str, ...]:
    """The jobs `job` waits for: its `needs:` (one name or a list)."""
    needs = job.get("needs")
    names = [needs] if isinstance(needs, str) else needs if isinstance(needs, list) else []
    return tuple(str(name) for name in names)


FORK_OWNER = "contributor"  # who opened the pull request, from a fork
PR_NUMBER = 1


def pull_request_github(given: Mapping[str, Any], base_ref: str = "main") -> dict[str, Any]:
    """The `github` context of a `pull_request` (synchronize) run for a pull request from a
    fork into `base_ref` (the default branch guess), completed by what the caller knows
    (`repository`, `repository_owner`, `sha`...). What is not here reads as null."""
    repository = given.get("repository")
    name = str(repository).split("/")[-1] if repository else "project"
    head_ref = "arena-pull-request"
    sha = given.get("sha")
    fork = {
        "full_name": f"{FORK_OWNER}/{name}",
        "name": name,
        "fork": True,
        "owner": {"login": FORK_OWNER},
    }
    base_repo = {
        "full_name": repository,
        "name": name,
        "fork": False,
        "owner": {"login": given.get("repository_owner")},
    }
    pull_request = {
        "number": PR_NUMBER,
        "draft": False,
        "merged": False,
        "state": "open",
        "labels": [],
        "user": {"login": FORK_OWNER},
        "head": {"ref": head_ref, "sha": sha, "label": f"{FORK_OWNER}:{head_ref}", "repo": fork},
        "base": {"ref": base_ref, "sha": sha, "repo": base_repo},
    }
    context: dict[str, Any] = {
        "event_name": "pull_request",
        "event": {
            "action": "synchronize",
            "number": PR_NUMBER,
            "pull_request": pull_request,
            "repository": base_repo,
            "sender": {"login": FORK_OWNER},
        },
        "ref": f"refs/pull/{PR_NUMBER}/merge",
        "ref_name": f"{PR_NUMBER}/merge",
        "ref_type": "branch",
        "base_ref": base_ref,
        "head_ref": head_ref,
        "actor": FORK_OWNER,
        "triggering_actor": FORK_OWNER,
        "server_url": "https://github.com",
        "api_url": "https://api.github.com",
        "graphql_url": "https://api.github.com/graphql",
        "run_id": "1",
        "run_number": "1",
        "run_attempt": "1",
        "retention_days": "90",
        "token": "",
        "workspace": WORKSPACE,
        "action_path": "",
        "action_repository": "",
    }
    return {**context, **given}


def static_contexts(github: Mapping[str, Any]) -> dict[str, Any]:
    """The contexts every expression of a derived pipeline may read (matrix and env come later);
    `github` is open: a property it does not hold reads as null, and is noted."""
    return {
        "runner": {
            "os": "Linux",
            "arch": "X64",
            "name": "arena",
            "temp": "/tmp",
            "tool_cache": "/opt/hostedtoolcache",
            "debug": "",
        },
        "github": OpenContext("github", github),
        "secrets": {},  # unset, as in a pull request from a fork
        "vars": {},  # configuration variables: unset
        "inputs": {},  # a workflow_call's inputs, for a called workflow's legs
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
    for combination in expand_matrix(job.get("strategy"), contexts):
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
    """The entry names this leg: its display name, or the job (by id or name) as a whole.

    A leg of a reusable workflow is named as GitHub shows it (`caller / leg`, `outer / inner
    / leg` when calls nest), by a calling job's name or by its own name, with the outermost
    calling workflow's path or its own."""
    if ref.workflow is not None and not (
        same_workflow(ref.workflow, leg.workflow)
        or (leg.via is not None and same_workflow(ref.workflow, leg.via))
    ):
        return False
    wanted = _normal(ref.name)
    if wanted == ANY_JOB:
        return True
    if wanted == _normal(leg.display_name) or wanted == _normal(leg.job_id):
        return True
    if leg.caller is not None:
        # `outer / inner / leg` for nested calls: the whole name, or a calling job's
        chain = leg.caller.split(" / ")
        callers = {_normal(" / ".join(chain[:n])) for n in range(1, len(chain) + 1)}
        if wanted in callers | {_normal(f"{leg.caller} / {leg.display_name}")}:
            return True
    name = leg.job.get("name")
    return name is not None and "${{" not in to_text(name) and wanted == _normal(to_text(name))
