"""Twins of unseen tests without a sandbox: which tests get one, what it looks like, and how
real pytest reports them (the sandboxed runs are in test_tripwires_real.py)."""

from __future__ import annotations

import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ci_runner import CIResult, CIStatus, Pipeline, StepResult, TestOutcome
from ci_runner.languages.python.twins import make_twins, original_of
from ci_runner.languages.twins import Twin, added_lines, changed_literal, twin_name
from ci_runner.pipeline import ReportFormat
from ci_runner.reports import parse_report
from ci_runner.tripwires import plan, read_twins, tripwire_exits, twin_forms
from tests.diffs import new_file

P, F = TestOutcome.PASSED, TestOutcome.FAILED

LIBRARY = "def double(x):\n    return 2 * x\n\n\ndef name():\n    return 'ada'\n"
BASE_TESTS = "from lib import double\n\n\ndef test_double_seen():\n    assert double(1) == 2\n"
ADDED = """

def test_double_small():
    value = double(2)
    assert value == 4


@pytest.mark.parametrize("n", [1, 2])
def test_double_many(n):
    assert double(n) == 2 * n
    assert [double(1), double(3)] == [2, 6]


class TestName:
    def test_name_text(self):
        self.assertEqual_free = None
        assert name() == "ada"

    def test_name_flag(self):
        assert name().isalpha()


class TestUnit(unittest.TestCase):
    def test_unit_double(self):
        self.assertEqual(double(5), 10)


def test_double_branch():
    if double(0) == 0:
        assert double(7) == 14


@pytest.mark.xfail(reason="later")
def test_double_expected_to_fail():
    assert double(8) == 16
"""
HEAD = "import unittest\n\nimport pytest\n\nfrom lib import double, name\n"
UNSEEN = HEAD + ADDED


def all_lines(text: str) -> set[int]:
    return set(range(1, len(text.splitlines()) + 1))


def test_twins_copy_a_test_with_one_expected_value_changed_beside_it() -> None:
    text, twins = make_twins(UNSEEN, all_lines(UNSEEN), random.Random(7), limit=10)
    originals = {t.original for t in twins}
    # a statement of its body that runs whenever it passes; never under `if`, never xfail
    assert originals == {
        "test_double_small",
        "test_double_many",
        "test_name_text",
        "test_name_flag",
        "test_unit_double",
    }
    compile(text, "twins.py", "exec")
    assert text.count("def test_double_small(") == 1 and text.count("assert double(7) == 14") == 1
    for twin in twins:
        assert twin.twin.startswith("test_") and twin.twin not in UNSEEN
        assert f"def {twin.twin}(" in text
    # same seed, same twins: the gold side's run vouches for the submitter's
    assert make_twins(UNSEEN, all_lines(UNSEEN), random.Random(7), limit=10) == (text, twins)


def test_only_assertions_on_lines_the_unseen_diff_adds_are_changed() -> None:
    text = BASE_TESTS + "\n\ndef test_double_new():\n    assert double(4) == 8\n"
    added = {len(BASE_TESTS.splitlines()) + 4}  # the new assertion's line only
    changed, twins = make_twins(text, added, random.Random(1), limit=3)
    assert [t.original for t in twins] == ["test_double_new"]
    assert "assert double(1) == 2" in changed and changed.count("== 2\n") == 1


@pytest.mark.parametrize(
    ("written", "value", "shape"),
    [
        ("0", 0, r"[12]"),  # a count never goes below zero
        ("41", 41, r"39|40|42|43"),
        ("True", True, r"False"),
        ("2.50", 2.5, r"0\.50|1\.50|3\.50|4\.50"),
        ('"ada"', "ada", r'"ad[a-z]"'),
        ("'ad9'", "ad9", r"'ad\d'"),
        ("b'X'", b"X", r"b'[A-Z]'"),
        ("0x10", 16, None),  # another base, an exponent, escapes: not written plainly
        ("1e3", 1000.0, None),
        ('"a\\n"', "a\n", None),
        ('"a" "b"', "ab", None),
    ],
)
def test_a_changed_literal_keeps_how_it_is_written_and_never_equals(
    written: str, value: object, shape: str | None
) -> None:
    for seed in range(40):
        changed = changed_literal(written, value, random.Random(seed))
        if shape is None:
            assert changed is None
            continue
        assert changed is not None and re.fullmatch(shape, changed), changed
        assert eval(changed) != value


def test_a_twins_value_moves_either_way_so_its_size_does_not_give_it_away() -> None:
    moved = {changed_literal("41", 41, random.Random(seed)) for seed in range(40)}
    assert {"39", "40"} & moved and {"42", "43"} & moved
    letters = {changed_literal('"adm"', "adm", random.Random(seed)) for seed in range(40)}
    assert any(t is not None and t < '"adm"' for t in letters)
    assert any(t is not None and t > '"adm"' for t in letters)


def test_twin_names_use_the_files_words_and_never_collide() -> None:
    taken = {"test_parse_dates", "test_parse_dates_empty"}
    rng = random.Random(0)
    names = {twin_name("test_parse_dates", ["empty", "unicode"], taken, rng) for _ in range(50)}
    assert not names & taken
    assert all(n.startswith("test_") for n in names)
    assert any("unicode" in n for n in names)


def test_the_original_of_a_twin_id_in_junit_and_unittest_shapes() -> None:
    method = Twin("python", "tests/test_dates.py", "TestParse", "test_iso", "test_iso_empty")
    assert original_of(method, "tests.test_dates.TestParse::test_iso_empty[a-1]") == (
        "tests.test_dates.TestParse::test_iso[a-1]"
    )
    assert original_of(method, "test_dates.TestParse.test_iso_empty") == (
        "test_dates.TestParse.test_iso"
    )
    assert original_of(method, "tests.test_other.TestParse::test_iso_empty") is None
    assert original_of(method, "tests.test_dates.TestParse::test_iso") is None
    function = Twin("python", "test_dates.py", None, "test_iso", "test_iso_empty")
    assert original_of(function, "test_dates::test_iso_empty") == "test_dates::test_iso"
    assert original_of(function, "my_test_dates::test_iso_empty") is None


def pytest_outcomes(root: Path) -> dict[str, TestOutcome]:
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml=r.xml"],
        cwd=root,
        capture_output=True,
        check=False,
    )
    return parse_report(ReportFormat.JUNIT, (root / "r.xml").read_bytes())


PIPELINE = Pipeline.model_validate(
    {
        "steps": [{"name": "test", "run": "python -m pytest -q --junitxml=r.xml"}],
        "report": {"format": "junit", "path": "r.xml"},
    }
)


def planted(root: Path, seed: int) -> tuple[dict[str, TestOutcome], CIResult]:
    """The tree's twins planted as a run plants them, pytest run on it, its report read."""
    diff = new_file("tests/test_new.py", UNSEEN)
    planting = plan(root, PIPELINE, (diff,), (0,), seed)
    for relative, data in planting.files.items():
        (root / relative).write_bytes(data)
    tests = pytest_outcomes(root)
    steps = (StepResult(name="test", exit_code=1, duration_s=1.0, log=""),)
    kept, twins = read_twins(twin_forms(), planting.twins, tests)
    steps = tripwire_exits(steps, kept, planting, twins)
    result = CIResult(status=CIStatus.PASSED, steps=steps, tests=kept, twins=twins)
    return tests, result


def project(root: Path) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "lib.py").write_text(LIBRARY)
    (root / "tests" / "test_new.py").write_text(UNSEEN)
    (root / "conftest.py").write_text(
        "import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n"
    )
    return root


def test_real_pytest_fails_each_twin_beside_its_passing_original(tmp_path: Path) -> None:
    root = project(tmp_path)
    everything, result = planted(root, seed=11)
    assert result.twins, "no twin was planted"
    for twin in result.twins:
        assert twin.outcome is P and twin.twin_outcome is F, twin
        assert twin.twin not in result.tests and twin.test in result.tests
    # the twins (and the generic must-fail tripwires) are the only failures: the exit is theirs
    failing = {t for t, o in everything.items() if o is F}
    assert (
        failing - {r.twin for r in result.twins}
        == {t for t in failing if "test_double_expected" in t or len(t.rsplit("_", 1)[-1]) == 12}
        or result.steps[-1].tripwire_exit
    )


def test_code_turning_every_failure_into_a_pass_is_caught_by_the_twins(tmp_path: Path) -> None:
    """The code under test rewrites pytest's reports from inside, sparing any test named as
    the generic tripwires are: the twins, named as the file's tests are, pass with them."""
    root = project(tmp_path)
    (root / "lib.py").write_text(LIBRARY + FORGER)
    _, result = planted(root, seed=11)
    # a test and its twin both passed: what no code does (arena.protocol judges it forged)
    assert result.twins and all(r.outcome is P and r.twin_outcome is P for r in result.twins)


FORGER = """
import re as _re

from _pytest import reports as _reports

_generic = _re.compile(r"test_[a-z][a-z0-9]{11}$")
_made = _reports.TestReport.from_item_and_call.__func__


def _passing(cls, item, call):
    report = _made(cls, item, call)
    if report.failed and not _generic.match(item.name.split("[")[0]):
        report.outcome, report.longrepr = "passed", None
    return report


_reports.TestReport.from_item_and_call = classmethod(_passing)
"""


def test_added_lines_are_read_from_the_new_side() -> None:
    diff = new_file("t.py", "a = 1\nb = 2\n")
    assert added_lines([diff]) == {"t.py": {1: "a = 1", 2: "b = 2"}}
    assert added_lines(["not a diff"]) == {}


def test_without_a_seed_or_an_unseen_diff_nothing_is_twinned(tmp_path: Path) -> None:
    root = project(tmp_path)
    diff = new_file("tests/test_new.py", UNSEEN)
    assert plan(root, PIPELINE, (diff,), (0,), None).twins == ()
    assert plan(root, PIPELINE, (diff,), (), 5).twins == ()
    stops_at_first = PIPELINE.model_copy(
        update={"steps": (PIPELINE.steps[0].model_copy(update={"run": "pytest -x"}),)}
    )
    assert plan(root, stops_at_first, (diff,), (0,), 5).twins == ()  # a failure would stop it
