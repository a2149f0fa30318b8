"""Pipelines derived from a repo's GitHub Actions job: its `run:` steps, in order.

`actions/checkout` and `setup-*` actions are what the CI image already provides; any other
`uses:` cannot run offline in the sandbox and is skipped, and the caller records it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

from ci_runner.errors import CIError
from ci_runner.pipeline import Pipeline, ReportFormat, ReportSpec, Step

_PROVIDED = re.compile(
    r"^actions/(checkout|setup-[a-z]+|cache)@|^[\w-]+/setup-[\w-]+@|^dtolnay/rust-toolchain@"
)
_GO_TEST = re.compile(r"\bgo test\b(?!.*-json)")
REPORT_FILE = "arena-report.xml"


class WorkflowError(CIError):
    """The named job cannot be found or turned into a pipeline."""


@dataclass(frozen=True)
class DerivedPipeline:
    pipeline: Pipeline
    skipped_actions: tuple[str, ...]
    workflow_file: str


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _env(block: Any) -> dict[str, str]:
    if not isinstance(block, dict):
        return {}
    return {str(k): _text(v) for k, v in block.items()}


def _report_for(language: str, steps: list[Step]) -> tuple[ReportSpec, dict[str, str], list[Step]]:
    """How the derived pipeline's tests are read, per language, without touching the tests."""
    if language == "python":
        # every pytest run writes JUnit, whatever its command line says
        env = {"PYTEST_ADDOPTS": f"--junitxml=/workspace/{REPORT_FILE}"}
        return ReportSpec(format=ReportFormat.JUNIT, path=REPORT_FILE), env, steps
    markers = {"go": "go test", "rust": "cargo test", "cpp": "ctest"}
    formats = {"go": ReportFormat.GO_JSON, "rust": ReportFormat.LIBTEST, "cpp": ReportFormat.CTEST}
    if language not in markers:
        raise WorkflowError(f"no report rule for language {language!r}")
    if language == "go":
        steps = [s.model_copy(update={"run": _GO_TEST.sub("go test -json", s.run)}) for s in steps]
    testing = [s for s in steps if markers[language] in s.run]
    if not testing:
        raise WorkflowError(
            f"no step of the job runs `{markers[language]}`, so no tests can be read"
        )
    return ReportSpec(format=formats[language], step=testing[-1].name), {}, steps


def derive_pipeline(
    workflows: dict[str, str], job_names: list[str], language: str, step_timeout_s: float = 1800
) -> DerivedPipeline:
    """The first of `job_names` found in the workflow files, as a pipeline."""
    for path, text in sorted(workflows.items()):
        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise WorkflowError(f"{path} is not valid YAML: {exc}") from exc
        jobs = document.get("jobs") if isinstance(document, dict) else None
        if not isinstance(jobs, dict):
            continue
        for job_name in job_names:
            job = jobs.get(job_name)
            if isinstance(job, dict):
                return _job_pipeline(path, document, job_name, job, language, step_timeout_s)
    known = ", ".join(sorted(workflows)) or "none found"
    raise WorkflowError(f"no job named {', '.join(job_names)} in .github/workflows ({known})")


def _job_pipeline(
    path: str,
    document: dict[str, Any],
    job_name: str,
    job: dict[str, Any],
    language: str,
    step_timeout_s: float,
) -> DerivedPipeline:
    base_env = {**_env(document.get("env")), **_env(job.get("env"))}
    defaults = job.get("defaults", {}) or {}
    default_dir = _text((defaults.get("run") or {}).get("working-directory")) or "."
    steps: list[Step] = []
    skipped: list[str] = []
    for index, raw in enumerate(job.get("steps") or []):
        if not isinstance(raw, dict):
            continue
        uses = _text(raw.get("uses"))
        if uses:
            if not _PROVIDED.match(uses):
                skipped.append(uses)
            continue
        run = _text(raw.get("run")).strip()
        if not run:
            continue
        name = _text(raw.get("name")) or f"step-{index + 1}"
        while any(s.name == name for s in steps):
            name += "'"
        minutes = raw.get("timeout-minutes")
        steps.append(
            Step(
                name=name,
                run=run,
                env=_env(raw.get("env")),
                workdir=_text(raw.get("working-directory")) or default_dir,
                timeout_s=float(minutes) * 60
                if isinstance(minutes, int | float)
                else step_timeout_s,
                continue_on_error=bool(raw.get("continue-on-error", False)),
            )
        )
    if not steps:
        raise WorkflowError(f"job {job_name!r} in {path} has no run: steps")
    report, report_env, steps = _report_for(language, steps)
    pipeline = Pipeline(steps=tuple(steps), report=report, env={**base_env, **report_env})
    return DerivedPipeline(pipeline=pipeline, skipped_actions=tuple(skipped), workflow_file=path)
