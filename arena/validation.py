"""Task validation: FAIL_TO_PASS and PASS_TO_PASS from two runs of each tree, without and with
the gold patch (swing-protocol.md, "Task validation")."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from arena.ci import TaskCI
from arena.tasks.schema import CandidateLeg, Task, TaskError, TaskKind, Validation
from arena.tasks.unnamed_tests import (
    GOLD_TESTS,
    REPOSITORY_TESTS,
    gold_test_names,
    names_none,
    repository_test_names,
)
from arena.tasks.unnamed_tests import MARK as UNNAMED_MARK
from ci_runner import (
    CIResult,
    CISettings,
    CIStatus,
    EnvironmentBuildError,
    TestOutcome,
    expected_sites,
)

FAILING = (TestOutcome.FAILED, TestOutcome.ERROR)
RUNS_PER_TREE = 2
NO_TEST_RAN = "base + gold patch ran no test"
NOISE_RERUNS = 2  # how often a tree's runs are made again while they look like load
MAX_LEGS_TRIED = CISettings.model_fields["max_legs_tried"].default


class ValidationIncomplete(TaskError):
    """A validation run timed out twice: no verdict is stored, the next attempt runs again."""


def _flaky(runs: Sequence[CIResult]) -> set[str]:
    """Tests whose outcome (or presence) differs between runs of one tree."""
    ids = set().union(*(r.tests for r in runs))
    return {t for t in ids if len({r.tests.get(t) for r in runs}) > 1}


def _empty_after_failure(result: CIResult) -> tuple[str, int | None] | None:
    """(the failed step, its exit code) when a run read no test after a step failed."""
    if result.tests or result.patch_error is not None:
        return None
    failed = next((s for s in result.steps if not s.skipped and not s.succeeded), None)
    return None if failed is None else (failed.name, failed.exit_code)


def infrastructure_noise(runs: Sequence[CIResult]) -> str | None:
    """Why the runs of one tree look like load on the machine rather than the code, or None.

    A run that read no test after a failed step while its twin reported tests, twins that
    fail at different steps with no report, and twins that disagree on every test they both
    ran are the machine's (swing-protocol.md): they are run again, never stored as an
    invalid task or as flaky tests. Twins that fail alike at one step are the code's (a gold
    patch that does not build fails the same way every time)."""
    empty = [_empty_after_failure(r) for r in runs]
    if any(e is not None for e in empty):
        if any(e is None and r.tests for e, r in zip(empty, runs, strict=True)):
            step = next(e for e in empty if e is not None)
            return f"a run read no test after step {step[0]!r} failed while its twin ran tests"
        if len(set(empty)) > 1:
            return "its runs failed at different steps and read no test"
        return None
    if len(runs) < 2:
        return None
    both = set(runs[0].tests).intersection(*(r.tests for r in runs[1:]))
    # (one test that flips is a flaky test, recorded as such; a whole suite flipping is load)
    if len(both) > 1 and all(len({r.tests[t] for r in runs}) > 1 for t in both):
        return f"its runs disagree on every one of the {len(both)} tests they both ran"
    return None


def tripwire_sites(runs: Sequence[CIResult]) -> dict[str, str]:
    """The tripwire sites every one of the runs reported passed, spelled alike in each: where
    an honest run of the tree with the gold tests shows them."""
    if not runs:
        return {}
    common = expected_sites(runs[0])
    for result in runs[1:]:
        other = expected_sites(result)
        common = {site: prefix for site, prefix in common.items() if other.get(site) == prefix}
    return common


def _listed(ids: set[str]) -> str:
    shown = sorted(ids)
    return ", ".join(shown[:10]) + (" ..." if len(shown) > 10 else "")


def judge_validation(
    before: Sequence[CIResult], after: Sequence[CIResult], kind: TaskKind = TaskKind.GOLD_JUDGED
) -> Validation:
    """Pure: the verdict from the runs of `base (+ gold tests)` and `base + gold patch (+ ...)`.

    Each tree normally has two runs; a test whose outcome differs between them is flaky."""
    for label, runs in (("base", before), ("base + gold patch", after)):
        for result in runs:
            if result.patch_error is not None:
                what = "the gold tests" if label == "base" else "the gold patch and tests"
                return Validation(
                    valid=False, kind=kind, reason=f"{what} do not apply: {result.patch_error}"
                )
    flaky = _flaky(before) | _flaky(after)
    old: Mapping[str, TestOutcome] = {t: o for t, o in before[0].tests.items() if t not in flaky}
    new: Mapping[str, TestOutcome] = {t: o for t, o in after[0].tests.items() if t not in flaky}
    if not new:
        result = after[0]
        return Validation(
            valid=False,
            kind=kind,
            flaky=tuple(sorted(flaky)),
            reason=f"{NO_TEST_RAN} ({result.status.value}: {result.error})",
        )
    passing_after = {t for t, o in new.items() if o is TestOutcome.PASSED}
    failing_after = {t for t, o in new.items() if o in FAILING}
    passing_before = {t for t, o in old.items() if o is TestOutcome.PASSED}
    failing_before = {t for t, o in old.items() if o in FAILING}
    recorded = Validation(
        valid=False,
        kind=kind,
        flaky=tuple(sorted(flaky)),
        broken=tuple(sorted(failing_after & (failing_before | (set(new) - set(old))))),
        pass_to_pass=tuple(sorted(passing_after & passing_before)),
        tripwire_sites=tripwire_sites(after),
        # a must-fail tripwire that was planted and seen failing: one its runner never
        # reached (an invocation run apart that could not collect it) guards nothing
        guarded=any(
            site.failing_planted and site.failing in FAILING
            for result in after
            for site in result.tripwires
        ),
    )
    regressions = passing_before & failing_after
    if regressions:
        why = f"the gold patch breaks tests that passed without it: {_listed(regressions)}"
        return recorded.model_copy(update={"reason": why})
    if kind is TaskKind.CI_JUDGED:
        return recorded.model_copy(
            update={"valid": True, "pass_to_pass": tuple(sorted(passing_after))}
        )
    fail_to_pass = tuple(sorted(t for t in passing_after if t not in old or t in failing_before))
    if not fail_to_pass:
        why = "no test fails without the gold patch and passes with it"
        ran = after[0]
        if ran.status is not CIStatus.PASSED and ran.error:  # what kept them from passing
            why = f"{why} (base + gold patch {ran.status.value}: {ran.error})"
        return recorded.model_copy(update={"reason": why})
    return recorded.model_copy(update={"valid": True, "fail_to_pass": fail_to_pass})


def validate_task(task: Task, ci: TaskCI) -> Validation:
    """The validation of the task's pipeline; a stored one stands while the task's decisive
    fields are unchanged.

    Raises ValidationIncomplete (and SandboxError for infrastructure faults) rather than return
    a verdict that a timeout or a fault decided."""
    if task.validation is not None and task.validation.fingerprint == task.fingerprint():
        return task.validation
    verdict = _validate(task, ci)
    deviation = None if verdict.valid else ci.deviation(task)
    if deviation:  # the likeliest cause when the job ran on another toolchain: say it
        reason = f"{verdict.reason}; the environment is not the job's: {deviation}"
        verdict = verdict.model_copy(update={"reason": reason})
    return verdict.model_copy(update={"fingerprint": task.fingerprint()})


def choose_leg(task: Task, ci: TaskCI, max_legs: int = MAX_LEGS_TRIED) -> Task:
    """The task with its validation, on the job leg the gold patch picks.

    A task derived from a workflow keeps its usable legs in rank order: they are validated
    in that order, at most `max_legs` of them, and the first on which the gold patch turns
    tests from failing to passing (for a CI-judged task: which runs tests the gold patch
    keeps passing) becomes the task's pipeline. Each leg tried keeps its outcome on the
    task; when none is valid, the best-ranked leg stays, with its reason."""
    if task.validation is not None and task.validation.fingerprint == task.fingerprint():
        return task
    candidates = task.ci_candidates[: max(1, max_legs)]
    if len(candidates) <= 1:
        return task.model_copy(update={"validation": validate_task(task, ci)})
    first: Task | None = None
    for candidate in candidates:
        on_leg = task.on_leg(candidate)
        validation = validate_task(on_leg, ci)
        if validation.valid:
            return _copy_legs(on_leg.model_copy(update={"validation": validation}), task)
        task = _mark(task, candidate, f"tried: {validation.reason}")
        first = first or on_leg.model_copy(update={"validation": validation})
    assert first is not None and first.validation is not None
    untried = len(task.ci_candidates) - len(candidates)
    reason = (
        f"{first.validation.reason} (on the best-ranked leg {first.ci_job}; "
        f"{len(candidates)} legs tried, none valid"
        + (f"; {untried} more not tried (ARENA_MAX_LEGS_TRIED={max_legs})" if untried else "")
        + ")"
    )
    failed = first.validation.model_copy(update={"reason": reason})
    return _copy_legs(first, task).model_copy(update={"validation": failed})


def _mark(task: Task, candidate: CandidateLeg, why: str) -> Task:
    legs = tuple(
        leg.model_copy(update={"status": "tried", "why": why}) if leg.key == candidate.key else leg
        for leg in task.ci_legs
    )
    return task.model_copy(update={"ci_legs": legs})


def _copy_legs(target: Task, source: Task) -> Task:
    """`target` with the legs' outcomes recorded on `source`, its own leg still chosen."""
    chosen = {leg.key for leg in target.ci_legs if leg.status == "chosen"}
    legs = tuple(
        leg.model_copy(update={"status": "chosen"}) if leg.key in chosen else leg
        for leg in source.ci_legs
    )
    return target.model_copy(update={"ci_legs": legs})


def _validate(task: Task, ci: TaskCI) -> Validation:
    if not task.patch.strip():
        return Validation(valid=False, kind=task.kind, reason="the task has no gold patch")
    trees = {"base": (task.test_patch,), "base + gold patch": (task.patch, task.test_patch)}
    runs: dict[str, list[CIResult]] = {}
    for label, diffs in trees.items():
        try:
            runs[label] = _steady_runs(task, ci, label, diffs)
        except EnvironmentBuildError as exc:  # the task's setup is broken: it cannot be played
            return Validation(
                valid=False, kind=task.kind, reason=f"environment build failed: {exc}"
            )
        if any(r.status is CIStatus.TIMEOUT for r in runs[label]):
            raise ValidationIncomplete(
                f"task {task.instance_id}: validation of {label} timed out twice; "
                "not stored, it runs again next time"
            )
    verdict = judge_validation(runs["base"], runs["base + gold patch"], task.kind)
    return note_unnamed_tests(
        verdict,
        task.test_patch,
        runs["base + gold patch"],
        lambda: repository_test_names(ci.base_files(task), lambda p: ci.read_base(task, p)),
    )


def note_unnamed_tests(
    verdict: Validation,
    test_patch: str,
    after: Sequence[CIResult],
    repository_tests: Callable[[], frozenset[str]] = frozenset,
) -> Validation:
    """A verdict of no test read, with whether the output names any test the gold tests add,
    or without gold tests to name, any the repository's test sources define (read only then)
    (arena.tasks.unnamed_tests: a harness reporting no test by name is the repository's)."""
    reason = verdict.reason or ""
    ended_well = all(s.exit_code == 0 for r in after for s in r.steps if not s.skipped)
    if not reason.startswith(NO_TEST_RAN) or not ended_well:
        return verdict
    logs = [step.log for result in after for step in result.steps]
    names, whose = gold_test_names(test_patch), GOLD_TESTS
    if not names:
        names, whose = repository_tests(), REPOSITORY_TESTS
    if not names_none(names, logs):
        return verdict
    return verdict.model_copy(update={"reason": f"{reason}; {UNNAMED_MARK} {whose}"})


def _steady_runs(task: Task, ci: TaskCI, label: str, diffs: tuple[str, ...]) -> list[CIResult]:
    """The tree's runs, made again (their kept results forgotten) while they look like load
    (`infrastructure_noise`); ValidationIncomplete when they still do."""
    replicas = range(RUNS_PER_TREE)
    runs = [ci.run(task, diffs, replica=n) for n in replicas]
    for _ in range(NOISE_RERUNS):
        if infrastructure_noise(runs) is None:
            return runs
        for n in replicas:
            ci.forget(task, diffs, replica=n)
        runs = [ci.run(task, diffs, replica=n) for n in replicas]
    why = infrastructure_noise(runs)
    if why is not None:
        raise ValidationIncomplete(
            f"task {task.instance_id}: validation of {label}: {why}, {NOISE_RERUNS + 1} times "
            "(load on the machine, not the code); not stored, it runs again next time"
        )
    return runs
