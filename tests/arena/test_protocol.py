"""Every row of the protocol's outcome table, from constructed CI results."""

from __future__ import annotations

import pytest

from arena.protocol import (
    RoundFacts,
    Winner,
    judge_catch,
    judge_patch,
    judge_tests,
    reviewer_test_ids,
    round_winner,
)
from arena.tasks.validation import Validation
from ci_runner import CIResult, CIStatus, TestOutcome

P, F, E = TestOutcome.PASSED, TestOutcome.FAILED, TestOutcome.ERROR
VALIDATION = Validation(valid=True, fail_to_pass=("t::fixed",), pass_to_pass=("t::old",))
TEST_DIFF = (
    "diff --git a/tests/test_new.py b/tests/test_new.py\n--- /dev/null\n+++ b/tests/test_new.py\n"
)


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
    valid, own = judge_tests(TEST_DIFF, on_base, on_gold, GOLD_ONLY)
    on_patch = None
    if valid.holds and applies.holds:
        on_patch = ci({"tests.test_new::probe": F if catches else P})
    catch = judge_catch(on_patch, own)
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
    valid, own = judge_tests(None, None, None, GOLD_ONLY)
    assert not applies.holds and not correct.holds and not valid.holds and own == frozenset()
    assert round_winner(RoundFacts(False, False, False, False)) is Winner.DRAW


def test_gold_tests_conflicting_with_the_patch_mean_applies_but_wrong() -> None:
    applies, correct = judge_patch(ci({}, patch_error_diff=1), VALIDATION)
    assert applies.holds and not correct.holds


def test_tests_that_fail_with_the_gold_fix_are_invalid() -> None:
    on_base = ci({"tests.test_new::probe": F})
    on_gold = ci({"tests.test_new::probe": F})
    valid, _ = judge_tests(TEST_DIFF, on_base, on_gold, GOLD_ONLY)
    assert not valid.holds and "do not pass" in valid.reason


def test_tests_missing_on_base_reproduce_the_issue() -> None:
    """A test that cannot even build without the fix counts as failing there."""
    on_base = CIResult(status=CIStatus.FAILED, error="build failed")
    valid, _ = judge_tests(TEST_DIFF, on_base, VALID_TESTS[1], GOLD_ONLY)
    assert valid.holds


def test_changed_tests_are_found_by_their_file() -> None:
    diff = "diff --git a/tests/test_old.py b/tests/test_old.py\n--- a/tests/test_old.py\n+++ b/tests/test_old.py\n"
    with_t = ci({"tests.test_old::a": P, "tests.test_other::b": P})
    assert reviewer_test_ids(diff, with_t, with_t) == {"tests.test_old::a"}
    go_diff = "--- a/pkg/x_test.go\n+++ b/pkg/x_test.go\n"
    go = ci({"ex.com/m/pkg::TestX": P, "ex.com/m::TestY": P})
    assert reviewer_test_ids(go_diff, go, go) == {"ex.com/m/pkg::TestX"}
    root_diff = "--- a/x_test.go\n+++ b/x_test.go\n"
    assert reviewer_test_ids(root_diff, go, go) == {"ex.com/m::TestY"}
