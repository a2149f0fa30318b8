"""The overall status of a CI run, decided from its steps and tests alone."""

import re
import signal

from ci_runner.stops import StopCause
from ci_runner.types import CIStatus, Limits, StepResult, TestOutcome

_NO_SPACE = "No space left on device"
# a compiler whose process the kernel killed: on a build that fits elsewhere, the sandbox's
# memory (the step itself goes on and fails, so the sandbox sees no memory stop of its own)
_COMPILER_KILLED = re.compile(
    r"(?:fatal error: Killed signal terminated program \w+"
    r"|internal compiler error: Killed \(program \w+\)"
    r"|virtual memory exhausted: Cannot allocate memory"
    r"|rustc-LLVM ERROR: out of memory|memory allocation of \d+ bytes failed)"
)
# where a step's problem is the sandbox's size, not the code: the settings that change it
LIMITS_HINT = "ARENA_LIMITS"
_TAIL_CHARS = 4000  # where a build's own last words are


def _ended(exit_code: int | None) -> str:
    """How a process ended, in words: `killed by SIGKILL`, `with exit code 126`."""
    if exit_code is None:
        return "with no exit status"
    if exit_code > 128:
        try:
            return f"killed by {signal.Signals(exit_code - 128).name}"
        except ValueError:
            pass
    return f"with exit code {exit_code}"


def stop_problem(cause: StopCause, limits: Limits) -> str:
    """Whose fault a stop from inside the sandbox is, in words: always the code's."""
    if cause is StopCause.MEMORY:
        return f"memory limit of {limits.memory_mb} MiB exceeded"
    if cause is StopCause.PIDS:
        return f"the sandbox's own processes used up its limit of {limits.pids} processes"
    if cause is StopCause.DISK:
        return f"it wrote more than {limits.disk_mb} MiB outside the workspace"
    return "its own processes brought it down"


def step_problem(step: StepResult, limits: Limits) -> str | None:
    if step.skipped:
        return None
    if step.sandbox_died:
        cause = step.stopped_by or StopCause.OWN_PROCESSES
        return f"the sandbox stopped during step {step.name!r}: {stop_problem(cause, limits)}"
    if step.timed_out:
        return f"step {step.name!r} timed out after {step.duration_s:.1f}s and was killed"
    if step.oom_killed or step.stopped_by is StopCause.MEMORY:
        return f"step {step.name!r} was killed: {stop_problem(StopCause.MEMORY, limits)}"
    if step.stopped_by is StopCause.PIDS:
        return f"step {step.name!r} could not run: {stop_problem(StopCause.PIDS, limits)}"
    if step.stopped_by is StopCause.DISK:
        return f"step {step.name!r} failed: {stop_problem(StopCause.DISK, limits)}"
    if step.stopped_by is not None:
        return (
            f"step {step.name!r} was stopped by the sandbox's own processes "
            f"(it ended {_ended(step.exit_code)})"
        )
    if step.exit_code != 0 and not step.tripwire_exit:
        tail = step.log[-_TAIL_CHARS:]
        if _NO_SPACE in tail:  # the likeliest cause, and one a setting fixes
            return (
                f"step {step.name!r} failed with exit code {step.exit_code}: {_NO_SPACE} (the "
                f"workspace holds {limits.disk_mb} MiB; {LIMITS_HINT} disk_mb raises it)"
            )
        if (killed := _COMPILER_KILLED.search(tail)) is not None:
            return (
                f"step {step.name!r} failed with exit code {step.exit_code}: {killed[0]} (the "
                f"sandbox holds {limits.memory_mb} MiB of memory; {LIMITS_HINT} memory_mb "
                "raises it)"
            )
        return f"step {step.name!r} failed with exit code {step.exit_code}"
    return None


def overall_status(
    steps: tuple[StepResult, ...],
    tests: dict[str, TestOutcome],
    report_error: str | None,
    limits: Limits,
    distrust: str | None = None,
    stopped_after: StopCause | None = None,
) -> tuple[CIStatus, str | None]:
    """passed only if every step succeeded, a report was read and believed, and no test failed.

    A missing report after a failed step is a failure of the code under test (it did not
    build), while a missing report after clean steps is an error: the pipeline is wrong.
    A report that contradicts the test runner (`distrust`) was forged by the code: failed.
    A report the sandbox's own processes kept from being read after the steps
    (`stopped_after`: a daemon or a fork bomb left running) is the code's failure too.
    """
    problems = [p for p in (step_problem(s, limits) for s in steps) if p]
    if distrust:
        problems.append(distrust)
    if report_error and stopped_after is not None:
        why = (
            "the sandbox's own processes (left running by the code under test) stopped the "
            "runner reading it"
            if stopped_after is StopCause.OWN_PROCESSES
            else stop_problem(stopped_after, limits)
        )
        problems.append(f"the report could not be read after the steps: {why}")
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
