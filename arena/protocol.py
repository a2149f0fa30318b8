"""The swing protocol's rules as pure functions over CI results (see swing-protocol.md).

A run is forged (the code under test's fault: the tree that ran is not correct) when its
report contradicts the test runner or a tripwire that must fail passed (`CIResult.forged`,
set by the runner), or when a tripwire that must pass is missing at a site the reference
run shows it (`tripwires`: the sites `base + gold` reports, see ci_runner.tripwires).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from arena.edits import ReadFile
from arena.hunks import split_diff
from arena.ownership import base_test_ids, owned_test_ids
from arena.ownership.changes import file_paths
from arena.tasks.schema import Validation
from arena.validation import FAILING
from ci_runner import CIResult, CIStatus, TestOutcome, missing_tripwire

NO_TRIPWIRES: Mapping[str, str] = {}
NO_TWINS: Mapping[str, str] = {}

# The version of these rules a verdict is judged under, stored with every round: a change to
# any rule that can turn a verdict (what P' keeps, what a catch needs, how many runs make P
# correct) gets a new one, so a board can say when it mixes verdicts of different rules.
# 2026-12-06: P correct on two independent runs; tests reading the program never catch; N(P')
# keeps P' whole; P' keeps a library's testing package and drops CMake test registration.
# 2026-12-07: where tripwires run apart (a pipeline stopping at its first failure), the unseen
# tests run there too and take their outcome from there; a must-pass tripwire missing there
# while the run's tests passed is forged.
RULES_VERSION = "2026-12-07"


class Winner(StrEnum):
    SUBMITTER = "submitter"
    REVIEWER = "reviewer"
    DRAW = "draw"


@dataclass(frozen=True)
class Judgement:
    """One fact of a round and why it holds."""

    holds: bool
    reason: str


@dataclass(frozen=True)
class RoundFacts:
    patch_applies: bool
    patch_correct: bool
    tests_valid: bool
    tests_catch: bool


def round_winner(facts: RoundFacts) -> Winner:
    """The outcome table of the protocol, row for row."""
    if not facts.patch_applies:
        return Winner.REVIEWER if facts.tests_valid else Winner.DRAW
    if not facts.tests_valid:
        return Winner.SUBMITTER if facts.patch_correct else Winner.DRAW
    if facts.tests_catch:
        return Winner.REVIEWER
    return Winner.SUBMITTER if facts.patch_correct else Winner.DRAW


def forgery(
    result: CIResult,
    tripwires: Mapping[str, str] = NO_TRIPWIRES,
    twins: Mapping[str, str] = NO_TWINS,
) -> str | None:
    """Why the run's results are not the test runner's, or None: the runner's own verdict
    (a report contradicting the runner, a failing tripwire passed), a tripwire that must
    pass missing at one of `tripwires`, the sites the reference run reports, or one of
    `twins`, those the gold side vouched for, passing with its test or left out."""
    checks = (result.forged, missing_tripwire(result, tripwires), twin_forgery(result, twins))
    reasons = [r for r in checks if r]
    return "; ".join(reasons) or None


def twin_check(check: CIResult, required: Iterable[str]) -> tuple[dict[str, str], str | None]:
    """The twins a run of the gold side with twins reports (twin id: its original's id), and
    why they cannot guard the runs of the patch (None: they can).

    They can when the gold side shows them as only a wrong expectation shows: every twin
    failed, its original passed, the `required` tests all passed and nothing is forged. A
    twin that passes there too, or twins that break the tests beside them (a test sharing
    state with its twin), would blame an honest patch: then none is used."""
    if check.patch_error:
        return {}, f"the gold side's run with twins did not apply: {check.patch_error}"
    if not check.twins:
        return {}, "no twin could be made of these tests in this pipeline"
    if check.forged is not None:
        return {}, f"the gold side's run with twins is not believed: {check.forged}"
    wrong = [
        r.twin
        for r in check.twins
        if r.twin_outcome is TestOutcome.PASSED or r.outcome is not TestOutcome.PASSED
    ]
    if wrong:
        shown = ", ".join(wrong[:3])
        return {}, f"on the gold side, twins that do not fail beside a passing test: {shown}"
    broken = [t for t in required if check.tests.get(t) is not TestOutcome.PASSED]
    if broken:
        return {}, f"with twins beside them, {len(broken)} test(s) fail on the gold side"
    return {r.twin: r.test for r in check.twins}, None


def twin_forgery(result: CIResult, vouched: Mapping[str, str]) -> str | None:
    """Why the run is forged by its twins (those the gold side vouched for): a test and its
    twin both reported passed, which no code does, or a twin left out while its original is
    reported (one pipeline reports both or neither)."""
    if not vouched:
        return None
    reported = {r.twin: r for r in result.twins}
    both = sorted(
        t
        for t in vouched
        if t in reported
        and reported[t].twin_outcome is TestOutcome.PASSED
        and reported[t].outcome is TestOutcome.PASSED
    )
    gone = sorted(t for t, test in vouched.items() if t not in reported and test in result.tests)
    reasons = []
    if both:
        reasons.append(
            f"a test and its twin (the same test expecting another value) were both reported "
            f"passed ({_shown(both)}): no code makes both pass"
        )
    if gone:
        reasons.append(f"twins that every honest run reports are missing ({_shown(gone)})")
    if not reasons:
        return None
    return "; ".join(reasons) + ": the code under test rewrote the results"


def guarded_run(on_gold_tests: CIResult | None, validation: Validation) -> bool | None:
    """Whether a tripwire that must fail, or a twin, guarded the run of the patch with the
    gold tests: without one, code rewriting every result is seen only by tripwires that must
    pass (the task is unguarded). Without a run, the task's validation says."""
    if on_gold_tests is None or on_gold_tests.patch_error is not None:
        return validation.guarded
    return bool(on_gold_tests.twins) or any(s.failing_planted for s in on_gold_tests.tripwires)


def tripwire_note(result: CIResult) -> str:
    """What the run's tripwires showed, in a few words, for the evidence."""
    if not result.tripwires:
        return "no tripwire applies to this pipeline"
    held = sum(1 for s in result.tripwires if s.held)
    if held == len(result.tripwires):
        return f"the tripwires held at {held} site(s)"
    return f"the tripwires held at {held} of {len(result.tripwires)} site(s)"


def judge_patch(
    on_gold_tests: CIResult | None,
    validation: Validation,
    tripwires: Mapping[str, str] = NO_TRIPWIRES,
    twins: Mapping[str, str] = NO_TWINS,
) -> tuple[Judgement, Judgement]:
    """(P applies, P correct) from the run of `base + P + gold tests`; None: no P was produced.
    `tripwires` are the sites the reference run reports (`PreparedTask.tripwires`), `twins`
    the twins of the gold tests the gold side reports (`PreparedTask.twin_ids`)."""
    if on_gold_tests is None:
        no = Judgement(False, "the submitter produced no patch")
        return no, no
    if on_gold_tests.patch_error_diff == 0:
        reason = f"the patch does not apply: {on_gold_tests.patch_error}"
        return Judgement(False, reason), Judgement(False, reason)
    applies = Judgement(True, "the patch applies")
    if on_gold_tests.patch_error is not None:
        return applies, Judgement(
            False, f"the gold tests do not apply on top of the patch: {on_gold_tests.patch_error}"
        )
    forged = forgery(on_gold_tests, tripwires, twins)
    if forged is not None:  # the run's status decides too, not only its tests
        return applies, Judgement(False, f"the run's report is forged: {forged}")
    required = validation.fail_to_pass + validation.pass_to_pass
    broken = [t for t in required if on_gold_tests.tests.get(t) is not TestOutcome.PASSED]
    if broken:
        shown = ", ".join(broken[:10]) + (" ..." if len(broken) > 10 else "")
        return applies, Judgement(False, f"{len(broken)} required test(s) do not pass: {shown}")
    return applies, Judgement(
        True,
        f"all {len(required)} FAIL_TO_PASS and PASS_TO_PASS tests pass; "
        + tripwire_note(on_gold_tests),
    )


# replica numbers of a round's runs (`TaskCI.run`): no run is another's second run, so no
# two roles share one, even when T is the gold test patch (then `base + P' + T` is the tree
# of `base + P' + gold tests`, and `base + gold + T` the tree validation ran twice, 0 and 1)
PATCH_REPLICAS = (0, 1)  # base + P' + gold tests, first and second
CATCH_REPLICAS = {
    "tests_on_patch": 2,
    "tests_on_patch_again": 3,
    "tests_on_gold_again": 2,
    "tests_on_neutral_patch": 2,
}


def confirm_correct(first: Judgement, second: Judgement) -> Judgement:
    """P correct on two independent runs of `base + P' + gold tests`: a patch that fixes the
    bug only sometimes is not correct (`first` held; `second` is the other run's verdict)."""
    if not second.holds:
        return Judgement(
            False, f"correct on one run, not on a second independent run: {second.reason}"
        )
    return Judgement(True, f"{first.reason}; on two independent runs")


def changed_paths(diff_text: str) -> set[str]:
    """Paths a unified diff touches (both sides of each file, renames included)."""
    paths: set[str] = set()
    for patch in split_diff(diff_text):
        paths.update(p for p in file_paths(patch.header) if p is not None)
    return paths


def known_tests(validation: Validation) -> frozenset[str]:
    """Every test id validation saw: those it kept, and the flaky and broken it left out."""
    return frozenset(
        (*validation.fail_to_pass, *validation.pass_to_pass, *validation.flaky, *validation.broken)
    )


def reviewer_test_ids(
    test_diff: str,
    with_tests: CIResult,
    without_tests: CIResult,
    read_base: ReadFile,
    known: frozenset[str] = frozenset(),
) -> set[str]:
    """T's tests: ids new in `base + gold + T` (`with_tests`) compared with `base + gold`
    (`without_tests`), plus the ids of the existing tests whose definition T's diff changes.
    Other tests of a file T touches are not T's. `read_base` reads files at the base commit,
    the tree T was written against (see arena/ownership).

    `known` are the ids validation saw (FAIL_TO_PASS, PASS_TO_PASS, flaky, broken), and
    tests defined at the base commit in the files T touches are existing ones too: a test
    that one noisy run of `base + gold` happened to miss (its package aborted early) is not
    new, and a flaky one is left out of every verdict; T owns them only by changing their
    definition."""
    added = set(with_tests.tests) - set(without_tests.tests) - known
    added -= base_test_ids(test_diff, read_base, added)  # defined before T: not new
    return added | owned_test_ids(test_diff, read_base, with_tests.tests)


def judge_tests(
    test_diff: str | None,
    on_base: CIResult | None,
    on_gold: CIResult | None,
    gold_only: CIResult,
    read_base: ReadFile,
    known: frozenset[str] = frozenset(),
    tripwires: Mapping[str, str] = NO_TRIPWIRES,
) -> tuple[Judgement, frozenset[str]]:
    """T is valid when it applies to `base` and `base + gold`, T's tests are non-empty, every
    one passes on `base + gold + T` (`on_gold`), and one fails, errors or is missing on
    `base + T` (`on_base`), neither run forged. `gold_only` is the run of `base + gold`."""
    if test_diff is None or on_base is None or on_gold is None:
        return Judgement(False, "the reviewer produced no tests"), frozenset()
    for label, result in (("base", on_base), ("base + gold patch", on_gold)):
        if result.patch_error is not None:
            return Judgement(
                False, f"the tests do not apply to {label}: {result.patch_error}"
            ), frozenset()
        if (forged := forgery(result, tripwires)) is not None:
            return Judgement(
                False, f"the run of the tests on {label} is forged: {forged}"
            ), frozenset()
    own = frozenset(reviewer_test_ids(test_diff, on_gold, gold_only, read_base, known))
    if not own:
        return Judgement(
            False, "the test patch adds no test and changes no test's definition that ran"
        ), own
    not_passing = sorted(t for t in own if on_gold.tests.get(t) is not TestOutcome.PASSED)
    if not_passing:
        return Judgement(
            False, f"with the gold fix these tests do not pass: {', '.join(not_passing[:10])}"
        ), own
    reproducing = sorted(t for t in own if t not in on_base.tests or on_base.tests[t] in FAILING)
    if not reproducing:
        return Judgement(
            False, "none of the tests fails on the base commit: they do not reproduce the issue"
        ), own
    shown = ", ".join(sorted(own)[:10]) + (" ..." if len(own) > 10 else "")
    return Judgement(
        True, f"{len(own)} test(s), {len(reproducing)} reproduce the issue: {shown}"
    ), own


class CatchRun(StrEnum):
    """The runs a catch rests on, in the order they are made (each only while one of T's
    tests is still failing): `base + P' + T`, the same again, `base + gold + T` again, and
    `base + N(P') + T`."""

    ON_PATCH = "tests_on_patch"
    AGAIN = "tests_on_patch_again"
    GOLD_AGAIN = "tests_on_gold_again"
    NEUTRAL = "tests_on_neutral_patch"

    @property
    def replica(self) -> int:
        return CATCH_REPLICAS[self.value]


def _failing(result: CIResult, test_ids: Iterable[str]) -> list[str]:
    return sorted(t for t in test_ids if t not in result.tests or result.tests[t] in FAILING)


def _shown(ids: list[str]) -> str:
    return ", ".join(ids[:10]) + (" ..." if len(ids) > 10 else "")


def _catch_stages(
    runs: Mapping[CatchRun, CIResult], test_ids: Iterable[str], tripwires: Mapping[str, str]
) -> tuple[list[str], CatchRun | None, Judgement | None]:
    """(T's tests still catching, the run needed next, the verdict once it is known)."""
    on_patch = runs.get(CatchRun.ON_PATCH)
    if on_patch is None:
        return [], None, Judgement(False, "not run: needs valid tests and an applying patch")
    if on_patch.patch_error is not None:
        reason = f"the tests do not apply on top of the patch: {on_patch.patch_error}"
        return [], None, Judgement(False, reason)
    forged = forgery(on_patch, tripwires)
    if forged is None and _both_passed(on_patch):
        # twins of T's tests passed beside them: P's doing only if the same twins fail on the
        # gold side (T's own state or chance could make a twin pass anywhere)
        gold_again = runs.get(CatchRun.GOLD_AGAIN)
        if gold_again is None:
            return [], CatchRun.GOLD_AGAIN, None
        forged = twin_forgery(on_patch, twin_check(gold_again, ())[0])
    if forged is not None:  # T's runs on the gold side were believed: P forged it
        reason = f"the run of the patch with the reviewer's tests is forged: {forged}"
        return [], None, Judgement(True, reason)
    caught = _failing(on_patch, test_ids)
    if not caught:
        skipped = sorted(t for t in test_ids if on_patch.tests[t] is TestOutcome.SKIPPED)
        if skipped:
            reason = f"no test of the reviewer fails on the patch ({len(skipped)} skipped)"
            return [], None, Judgement(False, reason)
        return [], None, Judgement(False, "every test of the reviewer passes on the patch")
    first = caught
    again = runs.get(CatchRun.AGAIN)
    if again is None:
        return caught, CatchRun.AGAIN, None
    caught = [] if again.patch_error is not None else _failing(again, caught)
    if not caught:
        reason = f"flaky: {_shown(first)} failed on the patch once and passed on a second run"
        return [], None, Judgement(False, reason)
    gold_again = runs.get(CatchRun.GOLD_AGAIN)
    if gold_again is None:
        return caught, CatchRun.GOLD_AGAIN, None
    steady = [t for t in caught if gold_again.tests.get(t) is TestOutcome.PASSED]
    if not steady:
        reason = f"flaky: {_shown(caught)} did not pass again on a second run with the gold fix"
        return [], None, Judgement(False, reason)
    neutral = runs.get(CatchRun.NEUTRAL)
    if neutral is None:
        return steady, CatchRun.NEUTRAL, None
    behavioural = [] if neutral.patch_error is not None else _failing(neutral, steady)
    if not behavioural:
        reason = (
            f"{_shown(steady)} fail on the patch but not after a neutral change of the files it "
            "touches (a comment line): they recognise the patch's text, not its behaviour"
        )
        return [], None, Judgement(False, reason)
    reason = (
        f"failing, erroring or missing on the patch, twice and after a neutral change, "
        f"and passing again with the gold fix: {_shown(behavioural)}"
    )
    return behavioural, None, Judgement(True, reason)


def _both_passed(result: CIResult) -> bool:
    return any(
        r.outcome is TestOutcome.PASSED and r.twin_outcome is TestOutcome.PASSED
        for r in result.twins
    )


def twinned_catch_run(step: CatchRun, runs: Mapping[CatchRun, CIResult]) -> bool:
    """Whether the catch run `step` carries twins of T's tests: the run of the patch does;
    the gold side's second run does only once the patch's run showed a test and its twin
    both passing, to vouch for those twins. Every other run has T's tests alone, so twins
    never make or unmake a catch by themselves (the second run of the patch confirms a
    failure without them)."""
    if step is CatchRun.ON_PATCH:
        return True
    on_patch = runs.get(CatchRun.ON_PATCH)
    return step is CatchRun.GOLD_AGAIN and on_patch is not None and _both_passed(on_patch)


def next_catch_run(
    runs: Mapping[CatchRun, CIResult],
    test_ids: Iterable[str],
    tripwires: Mapping[str, str] = NO_TRIPWIRES,
) -> CatchRun | None:
    """The run a catch needs next, or None once the verdict is known."""
    return _catch_stages(runs, tuple(test_ids), tripwires)[1]


def judge_catch(
    runs: Mapping[CatchRun, CIResult],
    test_ids: Iterable[str],
    tripwires: Mapping[str, str] = NO_TRIPWIRES,
) -> Judgement:
    """T catches P when one of T's tests fails, errors or is missing on `base + P' + T`, and
    that failure is behaviour: it repeats on a second run, the test passes again on a second
    run of `base + gold + T`, and it survives a neutral change of every file P' touches.

    A skipped test catches nothing (it did not run against P), and a T that no longer applies
    on top of P catches nothing (the reviewer saw P when writing T). A forged run of P with T
    catches: the gold side's runs of T were believed, so the forging is P's; so does a test
    of T and its twin both passing with P, when the same twins failed beside their passing
    tests with the gold fix (`twin_check`)."""
    verdict = _catch_stages(runs, tuple(test_ids), tripwires)[2]
    if verdict is None:
        needed = next_catch_run(runs, test_ids, tripwires)
        raise ValueError(f"the catch is not decided yet: run {needed} is missing")
    return verdict


def reference_problem(
    gold_only: CIResult, validation: Validation, changed_by_gold_tests: Iterable[str] = ()
) -> str | None:
    """Why the reference run `base + gold` cannot be judged against, or None when it holds:
    it must finish, be believed, run tests, and pass every FAIL_TO_PASS and PASS_TO_PASS
    test it runs, except those whose definition the gold test patch changes (it is not
    applied here: their old versions pin the old behaviour) and those it adds (missing)."""
    if gold_only.patch_error is not None:
        return f"the gold patch does not apply: {gold_only.patch_error}"
    if gold_only.status in (CIStatus.TIMEOUT, CIStatus.ERROR):
        return f"the reference run ended with {gold_only.status.value}: {gold_only.error}"
    if gold_only.forged is not None:
        return f"the reference run's report is not believed: {gold_only.forged}"
    if not gold_only.tests:
        return f"the reference run reported no test: {gold_only.error}"
    exempt = frozenset(changed_by_gold_tests)
    required = (*validation.fail_to_pass, *validation.pass_to_pass)
    broken = [
        t
        for t in required
        if t not in exempt and gold_only.tests.get(t, TestOutcome.PASSED) is not TestOutcome.PASSED
    ]
    if broken:
        return (
            f"the reference run disagrees with validation: {len(broken)} required test(s) do "
            f"not pass: {_shown(broken)}"
        )
    return None
