"""Pipelines derived from a repo's GitHub Actions job, resolved the way GitHub Actions would.

Each `ci_name_list` entry is matched against the legs of the named workflow's jobs (matrix
expanded, display names rendered); Linux legs whose steps run tests are preferred, and every
leg considered is recorded with why it was kept or dropped. The chosen leg's steps have their
expressions substituted and their `if:` decided; installs go to `Pipeline.setup`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from ci_runner.errors import CIError
from ci_runner.pipeline import Pipeline, ReportFormat, ReportSpec, Step
from ci_runner.workflows.commands import ReadFile
from ci_runner.workflows.expressions import ExpressionError, Unsupported, condition
from ci_runner.workflows.legs import (
    ANY_JOB,
    JobRef,
    Leg,
    is_linux,
    job_legs,
    matches,
    same_workflow,
    static_contexts,
)
from ci_runner.workflows.steps import WORKSPACE, LegSteps, job_env, leg_steps
from ci_runner.workflows.yaml12 import load_yaml

_GO_TEST = re.compile(r"\bgo test\b(?!.*-json)")
REPORT_FILE = "arena-report.xml"
# JUnit to the report file, and the short summary of every test for the console fallback
_PYTEST_OPTIONS = f"-rap --junitxml={WORKSPACE}/{REPORT_FILE}"
# what GitHub's runner puts in every step's environment; the GITHUB_* files are not carried over
RUNNER_ENV = {
    "CI": "true",
    "GITHUB_ACTIONS": "true",
    "GITHUB_WORKSPACE": WORKSPACE,
    "RUNNER_OS": "Linux",
    "RUNNER_ARCH": "X64",
    "RUNNER_TEMP": "/tmp",
    "GITHUB_ENV": "/tmp/github_env",
    "GITHUB_PATH": "/tmp/github_path",
    "GITHUB_OUTPUT": "/tmp/github_output",
    "GITHUB_STEP_SUMMARY": "/tmp/github_step_summary",
}


class WorkflowError(CIError):
    """The named job cannot be found or turned into a pipeline."""

    reason = "no usable CI job"  # what an import report counts the task's line under


class UnsupportedJob(WorkflowError):
    """The named job needs something Arena does not provide (conda): no leg is dropped
    silently into a wrong environment; the task is refused with this reason."""

    reason = "conda job (unsupported)"


CONDA_DROPPED = "dropped: needs conda"


@dataclass(frozen=True)
class DerivedPipeline:
    pipeline: Pipeline
    skipped_actions: tuple[str, ...]
    workflow_file: str
    leg: str
    notes: tuple[str, ...]
    toolchain_request: str | None = None  # the toolchain version the job asks for


def _no_file(_: str) -> str | None:
    return None


def _documents(workflows: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    documents = {}
    for path, text in sorted(workflows.items()):
        try:
            document = load_yaml(text)
        except yaml.YAMLError as exc:
            raise WorkflowError(f"{path} is not valid YAML: {exc}") from exc
        if isinstance(document, dict) and isinstance(document.get("jobs"), dict):
            documents[path] = document
    return documents


def _candidates(
    documents: dict[str, dict[str, Any]],
    refs: Sequence[JobRef],
    contexts: dict[str, Any],
    notes: list[str],
) -> list[Leg]:
    legs: list[Leg] = []
    seen: set[tuple[str, str, str]] = set()
    for ref in refs:
        files = [p for p in documents if ref.workflow is None or same_workflow(ref.workflow, p)]
        if not files:
            notes.append(f"entry {str(ref)!r}: no such workflow file with jobs")
            continue
        found = False
        for path in files:
            for job_id, job in documents[path]["jobs"].items():
                if not isinstance(job, dict):
                    continue
                try:
                    job_legs_found = job_legs(path, str(job_id), job, contexts)
                except Unsupported as exc:
                    notes.append(f"job {job_id} ({path}): legs not expanded: {exc}")
                    job_legs_found = []
                for leg in job_legs_found:
                    if not matches(leg, ref):
                        continue
                    found = True
                    key = (leg.workflow, leg.job_id, leg.display_name)
                    if key not in seen:
                        seen.add(key)
                        legs.append(leg)
        if not found:
            notes.append(f"entry {str(ref)!r}: no job leg has this name")
    return legs


def _leg_contexts(document: dict[str, Any], leg: Leg, contexts: dict[str, Any]) -> dict[str, Any]:
    with_matrix = {**contexts, "matrix": leg.matrix}
    return {**with_matrix, "env": job_env(document, leg, with_matrix)}


def _consider(
    document: dict[str, Any],
    leg: Leg,
    contexts: dict[str, Any],
    read_file: ReadFile,
    step_timeout_s: float,
) -> tuple[LegSteps | None, dict[str, Any], str]:
    """The leg's steps if it is usable, and why it is kept or dropped."""
    if "uses" in leg.job:
        return None, contexts, "dropped: calls a reusable workflow"
    if not is_linux(leg.runs_on, leg.job):
        return None, contexts, f"dropped: runs on {leg.runs_on or 'an unknown runner'}, not Linux"
    try:
        leg_contexts = _leg_contexts(document, leg, contexts)
        if not condition(leg.job.get("if"), leg_contexts):
            return None, leg_contexts, f"dropped: the job's if: ({leg.job.get('if')}) is false"
    except (Unsupported, ExpressionError) as exc:
        return None, contexts, f"dropped: {exc}"
    steps = leg_steps(leg, leg_contexts, read_file, step_timeout_s, document.get("defaults"))
    for key in ("container", "services"):
        if leg.job.get(key):
            shown = leg.job[key] if key == "container" else ", ".join(map(str, leg.job[key]))
            steps.notes.append(f"the job's {key} ({shown}) is not provided; the CI image is used")
    if not steps.steps:
        return None, leg_contexts, "dropped: no run: step is left for a CI run"
    if not steps.test_runners:
        return None, leg_contexts, "dropped: no step runs tests"
    if steps.conda:
        needs = "; ".join(steps.conda)
        return None, leg_contexts, f"{CONDA_DROPPED} ({needs}), which Arena does not support"
    runners = ", ".join(f"{n} ({r})" for n, r in steps.test_runners.items())
    return steps, leg_contexts, f"kept: Linux ({leg.runs_on}), runs tests in {runners}"


def derive_pipeline(
    workflows: Mapping[str, str],
    refs: Sequence[JobRef | str],
    language: str,
    *,
    read_file: ReadFile = _no_file,
    github: Mapping[str, Any] | None = None,
    step_timeout_s: float = 1800,
) -> DerivedPipeline:
    """The first usable leg the entries name, as a pipeline; raises WorkflowError if none is."""
    documents = _documents(workflows)
    job_refs = [JobRef(r) if isinstance(r, str) else r for r in refs]
    notes: list[str] = []
    contexts = static_contexts(
        {"workspace": WORKSPACE, "event_name": "pull_request", **(github or {})}
    )
    chosen: tuple[Leg, LegSteps] | None = None
    conda_legs: list[str] = []
    for leg in _candidates(documents, job_refs, contexts, notes):
        steps, _, verdict = _consider(
            documents[leg.workflow], leg, contexts, read_file, step_timeout_s
        )
        notes.append(f"leg {leg}: {verdict}")
        if verdict.startswith(CONDA_DROPPED):
            conda_legs.append(f"leg {leg}: {verdict}")
        if steps is not None and chosen is None:
            chosen = (leg, steps)
    if chosen is None:
        known = ", ".join(sorted(workflows)) or "no workflow files"
        wanted = ", ".join(str(r) for r in job_refs)
        if conda_legs:  # the job would have run, in an environment Arena cannot make
            raise UnsupportedJob(
                f"the Linux test job among {wanted} needs conda, which Arena does not "
                f"support: {'; '.join(conda_legs[:3])}"
            )
        detail = "; ".join(notes[-6:]) or "nothing matched"
        raise WorkflowError(f"no usable Linux test job among {wanted} in {known}: {detail}")
    leg, steps = chosen
    notes.append(f"chosen: leg {leg}")
    notes.extend(f"  {note}" for note in steps.notes)
    leg_contexts = _leg_contexts(documents[leg.workflow], leg, contexts)
    setup, ci_steps = _through_last_test(steps, notes)
    report, report_env, ci_steps = _report_for(language, ci_steps, steps.test_runners, notes)
    env = {**RUNNER_ENV, **leg_contexts["env"]}
    for key, value in report_env.items():
        env[key] = f"{env[key]} {value}" if key == "PYTEST_ADDOPTS" and key in env else value
    pipeline = Pipeline(steps=tuple(ci_steps), report=report, env=env, setup=tuple(setup))
    return DerivedPipeline(
        pipeline=pipeline,
        skipped_actions=tuple(steps.skipped_actions),
        workflow_file=leg.workflow,
        leg=leg.display_name,
        notes=tuple(notes),
        toolchain_request=steps.toolchain_request or _matrix_version(leg.matrix),
    )


_MATRIX_VERSIONS = ("python-version", "python", "go-version", "go", "rust", "toolchain")


def _matrix_version(matrix: dict[str, Any]) -> str | None:
    """A version the matrix names when no setup action says it (e.g. `matrix.python`)."""
    for key in _MATRIX_VERSIONS:
        value = matrix.get(key)
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            text = str(value).strip()
            if text[:1].isdigit() or text in ("stable", "nightly", "beta"):
                return text
    return None


def _through_last_test(steps: LegSteps, notes: list[str]) -> tuple[list[Step], list[Step]]:
    """Steps after the last one that runs tests (uploads, reports) only add ways to fail."""
    last = max(i for i, name in enumerate(steps.order) if name in steps.test_runners)
    after = set(steps.order[last + 1 :])
    for name in steps.order[last + 1 :]:
        notes.append(f"  step {name!r} dropped: it runs after the last test step")
    return (
        [s for s in steps.setup if s.name not in after],
        [s for s in steps.steps if s.name not in after],
    )


def _report_for(
    language: str, steps: list[Step], runners: dict[str, str], notes: list[str]
) -> tuple[ReportSpec, dict[str, str], list[Step]]:
    """How the derived pipeline's tests are read, per language, without touching the tests.

    When the named report cannot be read (a wrapper that hides it), the runner falls back
    to the test lines in the step logs.
    """
    if language == "python":
        # every pytest run writes JUnit, whatever its command line says; tox 4 passes it on
        env = {"PYTEST_ADDOPTS": _PYTEST_OPTIONS}
        if any("tox" in r for r in runners.values()):
            env["TOX_OVERRIDE"] = "testenv.pass_env+=PYTEST_ADDOPTS"
            notes.append("  tox: PYTEST_ADDOPTS passed through with TOX_OVERRIDE")
        steps = [_with_step_addopts(s) for s in steps]
        return ReportSpec(format=ReportFormat.JUNIT, path=REPORT_FILE), env, steps
    formats = {"go": ReportFormat.GO_JSON, "rust": ReportFormat.LIBTEST, "cpp": ReportFormat.CTEST}
    if language not in formats:
        raise WorkflowError(f"no report rule for language {language!r}")
    if language == "go":
        steps = [s.model_copy(update={"run": _GO_TEST.sub("go test -json", s.run)}) for s in steps]
    testing = [s for s in steps if s.name in runners]
    return ReportSpec(format=formats[language], step=testing[-1].name), {}, steps


def _with_step_addopts(step: Step) -> Step:
    if "PYTEST_ADDOPTS" not in step.env:
        return step
    env = {**step.env, "PYTEST_ADDOPTS": f"{step.env['PYTEST_ADDOPTS']} {_PYTEST_OPTIONS}"}
    return step.model_copy(update={"env": env})


__all__ = [
    "ANY_JOB",
    "DerivedPipeline",
    "JobRef",
    "UnsupportedJob",
    "WorkflowError",
    "derive_pipeline",
]
