"""Every row of the protocol's outcome table, from constructed CI results."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

import pytest

from arena.protocol import (
    PATCH_REPLICAS,
    CatchRun,
    Judgement,
    RoundFacts,
    Winner,
    confirm_correct,
    guarded_run,
    judge_catch,
    judge_patch,
    judge_tests,
    next_catch_run,
    reference_problem,
    round_winner,
    twin_check,
    twinned_catch_run,
)
from arena.tasks.schema import Validation
from arena.validation import judge_validation
from ci_runner import CIResult, CIStatus, TestOutcome, TripwireSite, TwinResult
from ci_runner.pipeline import ReportFormat
from ci_runner.reports import parse_report

P, F, E = TestOutcome.PASSED, TestOutcome.FAILED, TestOutcome.ERROR
VALIDATION = Validation(valid=True, fail_to_pass=("t::fixed",), pass_to_pass=("t::old",))
TEST_DIFF = (
    "diff --git a/tests/test_new.py b/tests/test_new.py\n--- /dev/null\n+++ b/tests/test_new.py\n"
)


def no_files(path: str) -> str | None:
    return None


def ci(tests: dict[str, TestOutcome], patch_error_diff: int | None = None) -> CIResult:
    failing = any(o in (F, E) for o in tests.values())
    if patch_error_diff is not None:
        return CIResult(
            status=CIStatus.ERROR,
            patch_error="x: does not apply",
            patch_error_diff=patch_error_diff,
        )
    return CIResult(status=CIStatus.FAILED if failing else CIStatus.PASSED, tests=tests)


GOLD_ONLY = ci({"t::old": P, "t::fixed": F})


def steady_catch(on_patch: CIResult | None, own: Iterable[str]) -> Judgement:
    """The catch when every re-run agrees with the first: the patch's run repeats, the gold
    side passes T's tests again, and the neutral change alters nothing."""
    own = tuple(own)
    runs: dict[CatchRun, CIResult] = {}
    if on_patch is not None:
        runs = {
            CatchRun.ON_PATCH: on_patch,
            CatchRun.AGAIN: on_patch,
            CatchRun.GOLD_AGAIN: ci(dict.fromkeys(own, P)),
            CatchRun.NEUTRAL: on_patch,
        }
    return judge_catch(runs, own)


# the four CI runs of a round, built so that each fact comes out as asked
PATCH_RUNS = {
    "no-apply": ci({}, patch_error_diff=0),
    "correct": ci({"t::old": P, "t::fixed": P}),
    "wrong": ci({"t::old": P, "t::fixed": F}),
}
VALID_TESTS = (ci({"tests.test_new::probe": F}), ci({"tests.test_new::probe": P, "t::old": P}))
INVALID_TESTS = (ci({"tests.test_new::probe": P}), ci({"tests.test_new::probe": P, "t::old": P}))


def facts_from_runs(patch: str, tests_valid: bool, catches: bool | None) -> RoundFacts:
    applies, correct = judge_patch(PATCH_RUNS[patch], VALIDATION)
    on_base, on_gold = VALID_TESTS if tests_valid else INVALID_TESTS
    valid, own = judge_tests(TEST_DIFF, on_base, on_gold, GOLD_ONLY, no_files)
    on_patch = None
    if valid.holds and applies.holds:
        on_patch = ci({"tests.test_new::probe": F if catches else P})
    catch = steady_catch(on_patch, own)
    return RoundFacts(applies.holds, correct.holds, valid.holds, catch.holds)


# (P applies, P correct, T valid, T catches P) -> winner, as in swing-protocol.md
TABLE = [
    ("no-apply", True, None, Winner.REVIEWER),
    ("no-apply", False, None, Winner.DRAW),
    ("correct", False, None, Winner.SUBMITTER),
    ("wrong", False, None, Winner.DRAW),
    ("correct", True, False, Winner.SUBMITTER),
    ("correct", True, True, Winner.REVIEWER),
    ("wrong", True, True, Winner.REVIEWER),
    ("wrong", True, False, Winner.DRAW),
]


@pytest.mark.parametrize(("patch", "tests_valid", "catches", "winner"), TABLE)
def test_outcome_table_row(
    patch: str, tests_valid: bool, catches: bool | None, winner: Winner
) -> None:
    facts = facts_from_runs(patch, tests_valid, catches)
    assert facts.patch_applies is (patch != "no-apply")
    assert facts.patch_correct is (patch == "correct")
    assert facts.tests_valid is tests_valid
    assert facts.tests_catch is bool(catches)
    assert round_winner(facts) is winner


def test_no_answer_counts_as_not_applying_and_not_valid() -> None:
    applies, correct = judge_patch(None, VALIDATION)
    valid, own = judge_tests(None, None, None, GOLD_ONLY, no_files)
    assert not applies.holds and not correct.holds and not valid.holds and own == frozenset()
    assert round_winner(RoundFacts(False, False, False, False)) is Winner.DRAW


def test_gold_tests_conflicting_with_the_patch_mean_applies_but_wrong() -> None:
    applies, correct = judge_patch(ci({}, patch_error_diff=1), VALIDATION)
    assert applies.holds and not correct.holds


def test_tests_that_fail_with_the_gold_fix_are_invalid() -> None:
    on_base = ci({"tests.test_new::probe": F})
    on_gold = ci({"tests.test_new::probe": F})
    valid, _ = judge_tests(TEST_DIFF, on_base, on_gold, GOLD_ONLY, no_files)
    assert not valid.holds and "do not pass" in valid.reason


def test_tests_missing_on_base_reproduce_the_issue() -> None:
    """A test that cannot even build without the fix counts as failing there."""
    on_base = CIResult(status=CIStatus.FAILED, error="build failed")
    valid, _ = judge_tests(TEST_DIFF, on_base, VALID_TESTS[1], GOLD_ONLY, no_files)
    assert valid.holds


# --- T's tests: new ids, plus the existing tests whose definition T changes -----------------

SLUG_TESTS = """from textkit import slugify


def test_slug_lowercases():
    assert slugify("Hi There") == "hi-there"


def test_slug_keeps_digits():
    assert slugify("v2 notes") == "v2-notes"


class TestLength:
    def test_cut(self):
        assert slugify("abcdef", max_length=3) == "abc"

    def test_empty(self):
        assert slugify("") == ""
"""
SLUG_PATH = "tests/test_slug.py"
LOWER = "tests.test_slug::test_slug_lowercases"
DIGITS = "tests.test_slug::test_slug_keeps_digits"
CUT = "tests.test_slug.TestLength::test_cut"
EMPTY = "tests.test_slug.TestLength::test_empty"
NEW = "tests.test_slug::test_slug_collapses_runs"


def slug_files(path: str) -> str | None:
    return SLUG_TESTS if path == SLUG_PATH else None


def reviewer_diff(after: str) -> str:
    body = "".join(
        difflib.unified_diff(
            SLUG_TESTS.splitlines(keepends=True),
            after.splitlines(keepends=True),
            f"a/{SLUG_PATH}",
            f"b/{SLUG_PATH}",
        )
    )
    return f"diff --git a/{SLUG_PATH} b/{SLUG_PATH}\n{body}"


APPENDED = reviewer_diff(
    SLUG_TESTS.replace(
        "\n\nclass TestLength",
        '\n\ndef test_slug_collapses_runs():\n    assert slugify("a  b") == "a-b"\n\n\nclass TestLength',
    )
)


def test_a_new_test_beside_an_old_test_the_gold_fix_breaks_is_valid() -> None:
    """The gold fix changes what `test_slug_keeps_digits` expects; the reviewer only appended
    `test_slug_collapses_runs` to that file, so the old test is not T's."""
    gold_only = ci({LOWER: P, DIGITS: F, CUT: P, EMPTY: P})
    on_base = ci({LOWER: P, DIGITS: P, CUT: P, EMPTY: P, NEW: F})
    on_gold = ci({LOWER: P, DIGITS: F, CUT: P, EMPTY: P, NEW: P})
    valid, own = judge_tests(APPENDED, on_base, on_gold, gold_only, slug_files)
    assert valid.holds, valid.reason
    assert own == {NEW}


def test_a_patch_breaking_an_untouched_test_of_a_touched_file_is_not_caught() -> None:
    gold_only = ci({LOWER: P, DIGITS: P, CUT: P, EMPTY: P})
    on_base = ci({LOWER: P, DIGITS: P, CUT: P, EMPTY: P, NEW: F})
    on_gold = ci({LOWER: P, DIGITS: P, CUT: P, EMPTY: P, NEW: P})
    valid, own = judge_tests(APPENDED, on_base, on_gold, gold_only, slug_files)
    on_patch = ci({LOWER: F, DIGITS: P, CUT: E, EMPTY: P, NEW: P})
    catch = steady_catch(on_patch, own)
    assert valid.holds and not catch.holds, catch.reason


def test_strengthening_an_existing_test_in_a_class_is_valid() -> None:
    after = SLUG_TESTS.replace(
        '== "abc"\n', '== "abc"\n        assert slugify("ab cd", max_length=3) == "ab"\n'
    )
    gold_only = ci({LOWER: P, DIGITS: F, CUT: P, EMPTY: P})
    on_base = ci({LOWER: P, DIGITS: P, CUT: F, EMPTY: P})
    on_gold = ci({LOWER: P, DIGITS: F, CUT: P, EMPTY: P})
    valid, own = judge_tests(reviewer_diff(after), on_base, on_gold, gold_only, slug_files)
    assert valid.holds, valid.reason
    assert own == {CUT}
    assert steady_catch(ci({LOWER: P, DIGITS: P, CUT: F, EMPTY: P}), own).holds
    assert not steady_catch(ci({LOWER: P, DIGITS: F, CUT: P, EMPTY: F}), own).holds


def test_a_test_patch_touching_no_test_definition_is_invalid() -> None:
    after = SLUG_TESTS.replace("from textkit import slugify", "from textkit import slugify  # noqa")
    run = ci({LOWER: P, DIGITS: P, CUT: P, EMPTY: P})
    valid, own = judge_tests(reviewer_diff(after), run, run, run, slug_files)
    assert not valid.holds and own == frozenset() and "no test" in valid.reason


@pytest.mark.parametrize(
    ("outcome", "catches"),
    [(P, False), (TestOutcome.SKIPPED, False), (F, True), (E, True), (None, True)],
)
def test_a_skipped_test_does_not_catch_a_missing_one_does(
    outcome: TestOutcome | None, catches: bool
) -> None:
    tests = {"t::other": P} if outcome is None else {"t::mine": outcome, "t::other": P}
    assert steady_catch(ci(tests), {"t::mine"}).holds is catches


def test_tests_that_no_longer_apply_on_the_patch_do_not_catch() -> None:
    catch = steady_catch(ci({}, patch_error_diff=1), {"t::mine"})
    assert not catch.holds and "do not apply" in catch.reason


def test_doctest_line_numbers_never_decide_a_verdict() -> None:
    """The gold fix and an equivalent fix of another length move the same doctest."""

    def cargo(line: int, verdict: str) -> CIResult:
        log = (
            "     Running unittests src/lib.rs (target/debug/deps/dt-1)\n"
            "test tests::doubles ... ok\n"
            "   Doc-tests dt\n"
            f"test src/lib.rs - double (line {line}) ... {verdict}\n"
        )
        tests = parse_report(ReportFormat.LIBTEST, log.encode())
        return ci(tests)

    validation = judge_validation([cargo(14, "FAILED")] * 2, [cargo(14, "ok")] * 2)
    assert validation.fail_to_pass == ("doc:dt::src/lib.rs - double",)
    applies, correct = judge_patch(cargo(19, "ok"), validation)
    assert applies.holds and correct.holds, correct.reason
    own = {"doc:dt::src/lib.rs - double"}
    assert not steady_catch(cargo(22, "ok"), own).holds
    assert steady_catch(cargo(22, "FAILED"), own).holds


def test_an_existing_test_a_noisy_reference_run_missed_is_not_the_reviewers() -> None:
    """Seen on hashicorp/raft under load: `base + gold` lost two existing tests to a slow
    package, so they looked new with T, failed once, and made the gold tests invalid."""
    from arena.protocol import known_tests

    validation = Validation(
        valid=True,
        fail_to_pass=("t::fixed",),
        pass_to_pass=("t::old", "t::slow"),
        flaky=("t::flap",),
    )
    gold_only = ci({"t::fixed": P})  # lost t::old, t::slow and t::flap
    on_base = ci({"tests.test_new::probe": F, "t::old": P, "t::slow": P, "t::flap": P})
    on_gold = ci({"tests.test_new::probe": P, "t::old": P, "t::slow": F, "t::flap": F})
    blind, _ = judge_tests(TEST_DIFF, on_base, on_gold, gold_only, no_files)
    assert not blind.holds and "t::slow" in blind.reason
    valid, own = judge_tests(
        TEST_DIFF, on_base, on_gold, gold_only, no_files, known_tests(validation)
    )
    assert valid.holds, valid.reason
    assert own == frozenset({"tests.test_new::probe"})


MINE = "t::mine"


def catch_runs(*results: CIResult) -> dict[CatchRun, CIResult]:
    return dict(zip(CatchRun, results, strict=False))


def test_a_catch_needs_its_re_runs_in_order_and_only_while_it_holds() -> None:
    failing, passing = ci({MINE: F}), ci({MINE: P})
    assert next_catch_run(catch_runs(passing), {MINE}) is None
    assert next_catch_run(catch_runs(failing), {MINE}) is CatchRun.AGAIN
    assert next_catch_run(catch_runs(failing, failing), {MINE}) is CatchRun.GOLD_AGAIN
    assert next_catch_run(catch_runs(failing, failing, passing), {MINE}) is CatchRun.NEUTRAL
    assert next_catch_run(catch_runs(failing, passing), {MINE}) is None
    with pytest.raises(ValueError, match="not decided"):
        judge_catch(catch_runs(failing), {MINE})


@pytest.mark.parametrize(
    ("again", "gold_again", "neutral", "catches", "why"),
    [
        (F, P, F, True, "twice and after a neutral change"),
        (P, None, None, False, "flaky"),
        (F, F, None, False, "did not pass again"),
        (F, P, P, False, "recognise the patch's text"),
    ],
)
def test_a_catch_is_behaviour_that_repeats_and_survives_a_neutral_change(
    again: TestOutcome,
    gold_again: TestOutcome | None,
    neutral: TestOutcome | None,
    catches: bool,
    why: str,
) -> None:
    runs = [ci({MINE: F}), ci({MINE: again})]
    runs += [ci({MINE: o}) for o in (gold_again, neutral) if o is not None]
    catch = judge_catch(catch_runs(*runs), {MINE})
    assert catch.holds is catches and why in catch.reason, catch.reason


def test_a_forged_run_of_the_patch_with_the_tests_is_the_patchs_doing() -> None:
    forged = CIResult(status=CIStatus.FAILED, tests={MINE: P}, forged="report contradicts")
    catch = judge_catch(catch_runs(forged), {MINE})
    assert catch.holds and "forged" in catch.reason


def test_a_forged_run_of_the_gold_tests_makes_the_patch_not_correct() -> None:
    forged = CIResult(
        status=CIStatus.FAILED, tests={"t::old": P, "t::fixed": P}, forged="report contradicts"
    )
    applies, correct = judge_patch(forged, VALIDATION)
    assert applies.holds and not correct.holds and "forged" in correct.reason


@pytest.mark.parametrize(
    ("result", "problem"),
    [
        (ci({"t::old": P}), None),  # the gold tests' own ids are missing: not applied here
        (ci({"t::old": F}), "disagrees with validation"),
        (CIResult(status=CIStatus.TIMEOUT, tests={"t::old": P}), "timeout"),
        (CIResult(status=CIStatus.ERROR, error="no report"), "error"),
        (CIResult(status=CIStatus.FAILED), "no test"),
        (CIResult(status=CIStatus.PASSED, tests={"t::old": P}, forged="x"), "not believed"),
    ],
)
def test_the_reference_run_is_checked_before_any_round_rests_on_it(
    result: CIResult, problem: str | None
) -> None:
    found = reference_problem(result, VALIDATION)
    assert found is None if problem is None else (found is not None and problem in found), found


def test_tests_the_gold_test_patch_changes_may_fail_in_the_reference_run() -> None:
    """Their old versions pin the old behaviour, and the gold tests are not applied there."""
    pinned = ci({"t::old": P, "t::fixed": F})
    assert reference_problem(pinned, VALIDATION) is not None
    assert reference_problem(pinned, VALIDATION, changed_by_gold_tests={"t::fixed"}) is None


# --- tripwires: a site an honest run reports must show its passing tripwire -----------------

SITE = "python tests"
EXPECTED = {SITE: "t::"}  # as the reference run showed it: the site's ids start with `t::`


def tripwired(
    tests: dict[str, TestOutcome], passing: TestOutcome | None, failing: TestOutcome | None = F
) -> CIResult:
    """A run whose tripwires at SITE showed `passing` and `failing` (None: missing)."""
    site = TripwireSite(
        site=SITE,
        prefix="t::" if passing or failing else None,
        passing=passing,
        failing=failing,
        failing_planted=True,
    )
    return ci(tests).model_copy(update={"tripwires": (site,)})


def test_a_run_missing_the_passing_tripwire_where_honest_runs_show_it_is_forged() -> None:
    """The required tests passed, but not through the test runner: its tripwire is gone."""
    fabricated = tripwired({"t::old": P, "t::fixed": P}, passing=None, failing=None)
    applies, correct = judge_patch(fabricated, VALIDATION, EXPECTED)
    assert applies.holds and not correct.holds, correct.reason
    assert "forged" in correct.reason and "must pass is missing" in correct.reason
    _, unexpected = judge_patch(fabricated, VALIDATION)  # no honest run showed the site
    assert unexpected.holds


def test_a_run_that_reports_no_test_of_the_site_passed_is_not_called_forged() -> None:
    """A build that breaks loses the tripwire with every other test: wrong, not forged."""
    broken = tripwired({"t::old": E}, passing=None, failing=None)
    _, correct = judge_patch(broken, VALIDATION, EXPECTED)
    assert not correct.holds and "forged" not in correct.reason
    assert "do not pass" in correct.reason


def test_a_correct_patch_says_its_tripwires_held() -> None:
    _, correct = judge_patch(tripwired({"t::old": P, "t::fixed": P}, P), VALIDATION, EXPECTED)
    assert correct.holds and "tripwires held at 1 site" in correct.reason


def test_reviewer_tests_run_without_their_tripwire_are_invalid() -> None:
    on_base = tripwired({"tests.test_new::probe": F, "t::old": P}, passing=None)
    valid, _ = judge_tests(
        TEST_DIFF, on_base, VALID_TESTS[1], GOLD_ONLY, no_files, tripwires=EXPECTED
    )
    assert not valid.holds and "on base is forged" in valid.reason


def test_a_run_of_the_patch_with_the_tests_missing_its_tripwire_is_a_catch() -> None:
    """The gold side's runs of T showed their tripwires: the one missing on P is P's doing."""
    forged = tripwired({MINE: P, "t::old": P}, passing=None)
    catch = judge_catch(catch_runs(forged), {MINE}, EXPECTED)
    assert catch.holds and "must pass is missing" in catch.reason
    assert not judge_catch(catch_runs(forged, forged, forged, forged), {MINE}).holds


def test_validation_records_the_sites_every_run_with_the_gold_tests_showed() -> None:
    def run(*sites: tuple[str, str | None, TestOutcome | None]) -> CIResult:
        shown = tuple(TripwireSite(site=s, prefix=p, passing=o) for s, p, o in sites)
        return ci({"t::old": P, "t::fixed": P}).model_copy(update={"tripwires": shown})

    before = [ci({"t::old": P, "t::fixed": F})] * 2
    after = [
        run(("python a", "a.", P), ("python b", "b.", P), ("python c", "c.", P)),
        run(("python a", "a.", P), ("python b", None, None), ("python c", "c.", F)),
    ]
    validation = judge_validation(before, after)
    assert validation.valid and validation.tripwire_sites == {"python a": "a."}
    assert validation.guarded is False  # no tripwire that must fail went in: unguarded
    failing = TripwireSite(site="python a", prefix="a.", passing=P, failing=F, failing_planted=True)
    guarded = [r.model_copy(update={"tripwires": (failing,)}) for r in after]
    assert judge_validation(before, guarded).guarded is True
    unseen = failing.model_copy(update={"failing": None})  # planted, never reached
    not_reached = [r.model_copy(update={"tripwires": (unseen,)}) for r in after]
    assert judge_validation(before, not_reached).guarded is False


def test_a_round_is_guarded_by_a_tripwire_that_must_fail_or_by_twins() -> None:
    validation = Validation(valid=True, fail_to_pass=("t::a",), guarded=False)
    assert guarded_run(None, validation) is False  # no run of a patch: the task says
    plain = ci({"t::a": P})
    assert guarded_run(plain, validation) is False
    failing = TripwireSite(site="python a", prefix="a.", passing=P, failing=F, failing_planted=True)
    assert guarded_run(plain.model_copy(update={"tripwires": (failing,)}), validation) is True
    assert guarded_run(_twinned(P, F), validation) is True


def test_a_patch_is_correct_only_when_a_second_independent_run_agrees() -> None:
    first = Judgement(True, "all 3 FAIL_TO_PASS and PASS_TO_PASS tests pass")
    held = confirm_correct(first, Judgement(True, "all 3 ... pass"))
    assert held.holds and held.reason.endswith("on two independent runs")
    coin_flip = confirm_correct(first, Judgement(False, "1 required test(s) do not pass: t"))
    assert not coin_flip.holds
    assert "not on a second independent run: 1 required test(s) do not pass" in coin_flip.reason


def test_no_run_of_a_round_is_another_runs_second_run() -> None:
    """Runs of one tree are one run when their replica numbers match (`TaskCI.run` caches by
    both): when T is the gold test patch, `base + P' + T` is the tree of `base + P' + gold
    tests` and `base + gold + T` the tree validation ran as replicas 0 and 1."""
    patch_tree = {("patch", r) for r in PATCH_REPLICAS}
    catch_on_patch = {("patch", CatchRun.ON_PATCH.replica), ("patch", CatchRun.AGAIN.replica)}
    assert len(catch_on_patch) == 2 and not patch_tree & catch_on_patch
    validation_and_first = {0, 1}  # validation's two runs; tests_on_gold reads replica 0
    assert CatchRun.GOLD_AGAIN.replica not in validation_and_first


def _twinned(outcome: TestOutcome, twin_outcome: TestOutcome, **result: object) -> CIResult:
    twin = TwinResult(test="t::a", twin="t::a_b", outcome=outcome, twin_outcome=twin_outcome)
    fields: dict[str, object] = {"status": CIStatus.PASSED, "tests": {"t::a": outcome}}
    return CIResult.model_validate({**fields, **result, "twins": (twin,)})


def test_the_gold_side_vouches_for_twins_only_as_a_wrong_expectation_shows() -> None:
    validation = Validation(valid=True, fail_to_pass=("t::a",), pass_to_pass=())
    good = _twinned(TestOutcome.PASSED, TestOutcome.FAILED)
    required = validation.fail_to_pass
    assert twin_check(good, required) == ({"t::a_b": "t::a"}, None)
    both = _twinned(TestOutcome.PASSED, TestOutcome.PASSED)
    assert "do not fail" in (twin_check(both, required)[1] or "")
    broken = _twinned(TestOutcome.FAILED, TestOutcome.FAILED)  # a twin breaking its test
    assert twin_check(broken, required)[0] == {}
    none = CIResult(status=CIStatus.PASSED, tests={"t::a": TestOutcome.PASSED})
    assert "no twin" in (twin_check(none, required)[1] or "")


def test_a_run_of_the_patch_where_a_test_and_its_twin_pass_or_a_twin_is_gone_is_forged() -> None:
    validation = Validation(valid=True, fail_to_pass=("t::a",), pass_to_pass=())
    vouched = {"t::a_b": "t::a"}
    honest = _twinned(TestOutcome.PASSED, TestOutcome.FAILED)
    assert judge_patch(honest, validation, twins=vouched)[1].holds
    dropped = CIResult(status=CIStatus.PASSED, tests={"t::a": TestOutcome.PASSED})
    correct = judge_patch(dropped, validation, twins=vouched)[1]
    assert not correct.holds and "twins that every honest run reports are missing" in correct.reason
    both = judge_patch(_twinned(TestOutcome.PASSED, TestOutcome.PASSED), validation, twins=vouched)
    assert not both[1].holds and "both reported passed" in both[1].reason
    # twins the gold side did not vouch for are not read
    assert judge_patch(_twinned(TestOutcome.PASSED, TestOutcome.PASSED), validation)[1].holds
    # a broken build reports neither: not forged, just not correct
    nothing = CIResult(status=CIStatus.ERROR, tests={})
    assert "forged" not in judge_patch(nothing, validation, twins=vouched)[1].reason


def test_a_test_of_the_reviewer_and_its_twin_both_passing_on_the_patch_catches_once_vouched() -> (
    None
):
    both = _twinned(TestOutcome.PASSED, TestOutcome.PASSED)
    runs = {CatchRun.ON_PATCH: both}
    assert twinned_catch_run(CatchRun.ON_PATCH, {})
    assert not twinned_catch_run(CatchRun.AGAIN, runs)
    assert twinned_catch_run(CatchRun.GOLD_AGAIN, runs)  # to vouch for the twins
    assert next_catch_run(runs, ["t::a"]) is CatchRun.GOLD_AGAIN
    vouching = {**runs, CatchRun.GOLD_AGAIN: _twinned(TestOutcome.PASSED, TestOutcome.FAILED)}
    catch = judge_catch(vouching, ["t::a"])
    assert catch.holds and "both reported passed" in catch.reason
    # the twin passes on the gold side too: T's own doing (state, chance), never P's
    framing = {**runs, CatchRun.GOLD_AGAIN: _twinned(TestOutcome.PASSED, TestOutcome.PASSED)}
    assert not judge_catch(framing, ["t::a"]).holds
    # an honest run of the patch: the twins change nothing
    honest = {CatchRun.ON_PATCH: _twinned(TestOutcome.PASSED, TestOutcome.FAILED)}
    assert not twinned_catch_run(CatchRun.GOLD_AGAIN, honest)
    assert not judge_catch(honest, ["t::a"]).holds
