"""The overall status of a CI run, decided from its steps and tests alone."""

from ci_runner.types import CIStatus, StepResult, TestOutcome


def step_problem(step: StepResult, memory_mb: int) -> str | None:
    if step.skipped:
        return None
    if step.sandbox_died:
        return f"the sandbox stopped during step {step.name!r}: its own processes brought it down"
    if step.timed_out:
        return f"step {step.name!r} timed out after {step.duration_s:.1f}s and was killed"
    if step.oom_killed:
        return f"step {step.name!r} was killed: memory limit of {memory_mb} MiB exceeded"
    if step.exit_code != 0:
        return f"step {step.name!r} failed with exit code {step.exit_code}"
    return None


def overall_status(
    steps: tuple[StepResult, ...],
    tests: dict[str, TestOutcome],
    report_error: str | None,
    memory_mb: int,
    distrust: str | None = None,
) -> tuple[CIStatus, str | None]:
    """passed only if every step succeeded, a report was read and believed, and no test failed.

    A missing report after a failed step is a failure of the code under test (it did not
    build), while a missing report after clean steps is an error: the pipeline is wrong.
    A report that contradicts the test runner (`distrust`) was forged by the code: failed.
    """
    problems = [p for p in (step_problem(s, memory_mb) for s in steps) if p]
    if distrust:
        problems.append(distrust)
    failing = sorted(t for t, o in tests.items() if o in (TestOutcome.FAILED, TestOutcome.ERROR))
    reasons = problems + ([report_error] if report_error else [])
    if failing:
        reasons.append(
            "failing tests: " + ", ".join(failing[:20]) + (" ..." if len(failing) > 20 else "")
        )
    message = "; ".join(reasons) or None
    if any(s.timed_out for s in steps):
        return CIStatus.TIMEOUT, message
    if problems or failing:
        return CIStatus.FAILED, message
    if report_error:
        return CIStatus.ERROR, message
    return CIStatus.PASSED, None
