"""A step that failed on the sandbox's size says which limit, and the setting that raises it:
a disk that filled, or a compiler the kernel killed for memory (the step itself goes on and
fails with exit code 1, so no memory stop of the sandbox's own says so)."""

from __future__ import annotations

import pytest

from ci_runner import LIMITS_HINT, Limits, StepResult
from ci_runner.outcome import step_problem

LIMITS = Limits(memory_mb=2048, disk_mb=2048)


def _failed(log: str) -> StepResult:
    return StepResult(name="Build and test", exit_code=1, duration_s=1.0, log=log)


@pytest.mark.parametrize(
    ("last_words", "limit"),
    [
        ("g++: fatal error: Killed signal terminated program cc1plus", "memory_mb"),
        ("c++: internal compiler error: Killed (program cc1plus)", "memory_mb"),
        ("virtual memory exhausted: Cannot allocate memory", "memory_mb"),
        ("rustc-LLVM ERROR: out of memory", "memory_mb"),
        ("cmake: file INSTALL cannot copy file: No space left on device.", "disk_mb"),
    ],
)
def test_a_step_cut_short_by_the_sandboxs_size_names_the_limit(last_words: str, limit: str) -> None:
    problem = step_problem(_failed(f"[4/67] compiling\n{last_words}\nninja: build stopped"), LIMITS)
    assert problem is not None and f"{LIMITS_HINT} {limit} raises it" in problem, problem
    assert "2048 MiB" in problem


def test_a_step_that_failed_on_its_own_names_no_limit() -> None:
    problem = step_problem(_failed("FAIL: test_add (tests.test_calc)\nKilled 3 zombies"), LIMITS)
    assert problem == "step 'Build and test' failed with exit code 1"
