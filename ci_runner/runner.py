"""One CI run end to end: checkout, diffs, sandboxed steps, report, result."""

from __future__ import annotations

import posixpath
import time
from collections.abc import Callable
from pathlib import Path

import docker

from ci_runner.config import CISettings
from ci_runner.engine import connect
from ci_runner.errors import PatchError, ReportError
from ci_runner.images import WORKSPACE
from ci_runner.outcome import overall_status
from ci_runner.patches import apply_diffs
from ci_runner.pipeline import Pipeline, Step
from ci_runner.reports import parse_report
from ci_runner.reports.console import parse_console
from ci_runner.sandbox.base import Sandbox
from ci_runner.sandbox.docker import DockerSandbox, sandbox_uid
from ci_runner.types import CIRequest, CIResult, CIStatus, Limits, StepResult, TestOutcome
from ci_runner.workspace import Workspaces, hand_to_uid, read_inside, remove_tree

StepCallback = Callable[[StepResult], None]


def _no_callback(_: StepResult) -> None:
    return None


class CIRunner:
    """Runs CIRequests in fresh Docker sandboxes; infrastructure faults raise SandboxError."""

    def __init__(self, settings: CISettings, client: docker.DockerClient | None = None) -> None:
        self._settings = settings
        self._client = client
        self._workspaces = Workspaces(settings.mirrors_dir, settings.runs_dir)

    @property
    def client(self) -> docker.DockerClient:
        if self._client is None:
            self._client = connect()
        return self._client

    def run(self, request: CIRequest, on_step: StepCallback = _no_callback) -> CIResult:
        started = time.monotonic()
        limits = request.limits or self._settings.limits
        run_dir, repo = self._workspaces.checkout(request.repo, request.commit)
        try:
            try:
                fuzz = apply_diffs(run_dir, repo, request.diffs)
            except PatchError as exc:
                return CIResult(
                    status=CIStatus.ERROR,
                    error=f"patch rejected: {exc}",
                    patch_error=str(exc),
                    patch_error_diff=exc.diff_index,
                    duration_s=time.monotonic() - started,
                    image=request.image,
                )
            hand_to_uid(run_dir, sandbox_uid())
            with DockerSandbox.start(self.client, request.image, run_dir, limits) as sandbox:
                steps = self._run_steps(sandbox, request.pipeline, limits, started, on_step)
            # the sandbox is gone, so nothing can touch the workspace while we read the report
            tests, report_error = self._collect_report(run_dir, request.pipeline, steps, limits)
        finally:
            remove_tree(run_dir)
        status, error = overall_status(steps, tests, report_error, limits.memory_mb)
        return CIResult(
            status=status,
            steps=steps,
            tests=tests,
            error=error,
            fuzz=fuzz,
            duration_s=time.monotonic() - started,
            image=request.image,
        )

    def _run_steps(
        self,
        sandbox: Sandbox,
        pipeline: Pipeline,
        limits: Limits,
        started: float,
        on_step: StepCallback,
    ) -> tuple[StepResult, ...]:
        results: list[StepResult] = []
        stopped = False
        for step in pipeline.steps:
            if stopped:
                results.append(
                    StepResult(name=step.name, exit_code=None, duration_s=0.0, log="", skipped=True)
                )
                continue
            remaining = limits.run_timeout_s - (time.monotonic() - started)
            result = self._run_step(sandbox, pipeline, step, limits, max(remaining, 0.01))
            results.append(result)
            on_step(result)
            if result.timed_out or (not result.succeeded and not step.continue_on_error):
                stopped = True
        return tuple(results)

    def _run_step(
        self,
        sandbox: Sandbox,
        pipeline: Pipeline,
        step: Step,
        limits: Limits,
        remaining: float,
    ) -> StepResult:
        done = sandbox.exec(
            step.run,
            env={**pipeline.env, **step.env},
            workdir=posixpath.normpath(f"{WORKSPACE}/{step.workdir}"),
            timeout_s=min(step.timeout_s, remaining),
            max_output_bytes=limits.max_output_bytes,
        )
        return StepResult(
            name=step.name,
            exit_code=done.exit_code,
            duration_s=done.duration_s,
            log=done.output,
            truncated=done.truncated,
            timed_out=done.timed_out,
            oom_killed=done.oom_killed,
        )

    def _collect_report(
        self,
        run_dir: Path,
        pipeline: Pipeline,
        steps: tuple[StepResult, ...],
        limits: Limits,
    ) -> tuple[dict[str, TestOutcome], str | None]:
        spec = pipeline.report
        try:
            if spec.path is not None:
                data = read_inside(run_dir, spec.path, limits.max_report_bytes)
            else:
                step = next(s for s in steps if s.name == spec.step)
                if step.skipped:
                    raise ReportError(f"report step {spec.step!r} did not run")
                data = step.log.encode()
            return parse_report(spec.format, data), None
        except ReportError as exc:
            # a wrapped runner (tox, make, a script) may hide the report: read the logs
            console = parse_console("\n".join(s.log for s in steps if not s.skipped))
            return (console, None) if console else ({}, str(exc))
