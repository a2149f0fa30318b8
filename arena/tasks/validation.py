"""Task validation: FAIL_TO_PASS and PASS_TO_PASS from the gold tests with and without the fix."""

from __future__ import annotations

from arena.ci import TaskCI
from arena.tasks.schema import Task, Validation
from ci_runner import CIResult, CIStatus, TestOutcome

FAILING = (TestOutcome.FAILED, TestOutcome.ERROR)


def judge_validation(tests_only: CIResult, with_fix: CIResult) -> Validation:
    """Pure: the verdict from `base + gold tests` and `base + gold patch + gold tests`."""
    for label, result in (("gold tests", tests_only), ("gold patch + gold tests", with_fix)):
        if result.patch_error is not None:
            return Validation(valid=False, reason=f"{label} do not apply: {result.patch_error}")
    if with_fix.status is not CIStatus.PASSED:
        return Validation(
            valid=False,
            reason=f"base + gold patch + gold tests is {with_fix.status.value}: {with_fix.error}",
        )
    before = tests_only.tests
    after = with_fix.tests
    fail_to_pass = sorted(
        t
        for t, o in after.items()
        if o is TestOutcome.PASSED and (t not in before or before[t] in FAILING)
    )
    pass_to_pass = sorted(
        t
        for t, o in after.items()
        if o is TestOutcome.PASSED and before.get(t) is TestOutcome.PASSED
    )
    if not fail_to_pass:
        return Validation(
            valid=False,
            reason="no test fails without the gold patch and passes with it",
            pass_to_pass=tuple(pass_to_pass),
        )
    return Validation(
        valid=True, fail_to_pass=tuple(fail_to_pass), pass_to_pass=tuple(pass_to_pass)
    )


def validate_task(task: Task, ci: TaskCI) -> Validation:
    """The task's validation; a stored one stands while the task's decisive fields are unchanged."""
    if task.validation is not None and task.validation.fingerprint == task.fingerprint():
        return task.validation
    return _validate(task, ci).model_copy(update={"fingerprint": task.fingerprint()})


def _validate(task: Task, ci: TaskCI) -> Validation:
    if not task.patch.strip() or not task.test_patch.strip():
        return Validation(valid=False, reason="the task has no gold patch or no gold test patch")
    tests_only = ci.run(task, (task.test_patch,))
    with_fix = ci.run(task, (task.patch, task.test_patch))
    return judge_validation(tests_only, with_fix)
