"""The swing protocol's rules as pure functions over CI results (see swing-protocol.md)."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from arena.tasks.schema import Validation
from arena.tasks.validation import FAILING
from ci_runner import CIResult, TestOutcome


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


def judge_patch(
    on_gold_tests: CIResult | None, validation: Validation
) -> tuple[Judgement, Judgement]:
    """(P applies, P correct) from the run of `base + P + gold tests`; None: no P was produced."""
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
    required = validation.fail_to_pass + validation.pass_to_pass
    broken = [t for t in required if on_gold_tests.tests.get(t) is not TestOutcome.PASSED]
    if broken:
        shown = ", ".join(broken[:10]) + (" ..." if len(broken) > 10 else "")
        return applies, Judgement(False, f"{len(broken)} required test(s) do not pass: {shown}")
    return applies, Judgement(True, f"all {len(required)} FAIL_TO_PASS and PASS_TO_PASS tests pass")


def changed_paths(diff_text: str) -> set[str]:
    """Paths a unified diff touches (its +++/--- headers)."""
    paths: set[str] = set()
    for line in diff_text.splitlines():
        if line.startswith(("+++ ", "--- ")):
            path = line[4:].strip().split("\t")[0]
            if path != "/dev/null":
                paths.add(path[2:] if path.startswith(("a/", "b/")) else path)
    return paths


def _belongs_to(test_id: str, path: str, root_package: str | None) -> bool:
    """Whether a test id comes from a file the diff touched (JUnit, libtest and go ids)."""
    head = test_id.split("::", 1)[0]
    stem, _ = posixpath.splitext(path)
    if head in (path, stem) or head.replace(".", "/") == stem:
        return True
    directory = posixpath.dirname(path)
    if path.endswith("_test.go"):
        return head.endswith(f"/{directory}") if directory else head == root_package
    return False


def reviewer_test_ids(test_diff: str, with_tests: CIResult, without_tests: CIResult) -> set[str]:
    """The tests a test patch adds (new ids) or changes (ids from the files it touches)."""
    added = set(with_tests.tests) - set(without_tests.tests)
    packages = [t.split("::", 1)[0] for t in with_tests.tests if "::" in t]
    root = min(packages, key=lambda p: p.count("/")) if packages else None
    touched = {
        t for t in with_tests.tests for p in changed_paths(test_diff) if _belongs_to(t, p, root)
    }
    return added | touched


def judge_tests(
    test_diff: str | None,
    on_base: CIResult | None,
    on_gold: CIResult | None,
    gold_only: CIResult,
) -> tuple[Judgement, frozenset[str]]:
    """T is valid when it applies, its tests pass with the gold fix and one fails without it."""
    if test_diff is None or on_base is None or on_gold is None:
        return Judgement(False, "the reviewer produced no tests"), frozenset()
    for label, result in (("base", on_base), ("base + gold patch", on_gold)):
        if result.patch_error is not None:
            return Judgement(
                False, f"the tests do not apply to {label}: {result.patch_error}"
            ), frozenset()
    own = frozenset(reviewer_test_ids(test_diff, on_gold, gold_only))
    if not own:
        return Judgement(False, "the test patch adds or changes no test that ran"), own
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
    return Judgement(True, f"{len(own)} test(s), {len(reproducing)} reproduce the issue"), own


def judge_catch(on_patch: CIResult | None, test_ids: Iterable[str]) -> Judgement:
    """T catches P when any of T's tests fails (or cannot run) on `base + P + T`."""
    if on_patch is None:
        return Judgement(False, "not run: needs valid tests and an applying patch")
    if on_patch.patch_error is not None:
        return Judgement(
            False, f"the tests do not apply on top of the patch: {on_patch.patch_error}"
        )
    caught = sorted(t for t in test_ids if on_patch.tests.get(t) is not TestOutcome.PASSED)
    if caught:
        return Judgement(True, f"failing on the patch: {', '.join(caught[:10])}")
    return Judgement(False, "every test of the reviewer passes on the patch")
