"""Twins of C++ test cases without a sandbox: which checks a twin changes, how it is named,
and how its id is told from its original's (the real frameworks in a container are in
tests/ci_runner/test_binaries_real.py)."""

from __future__ import annotations

import random
import re
from pathlib import Path

from ci_runner.languages.cpp.twins import declared_beside, make_twins, original_of, twin_name
from ci_runner.languages.twins import Twin, plant_twins
from ci_runner.tripwires import twin_forms
from tests.diffs import new_file

GTEST = """#include <gtest/gtest.h>
#include "calc.hpp"

TEST(Calc, AddsSmall) {
    EXPECT_EQ(add(2, 3), 5);
}

TEST(Calc, Negates)
{
    int value = neg(3);
    EXPECT_EQ(-3, value);
}

TEST_F(CalcFixture, KnowsEven) {
    EXPECT_TRUE(even(4));
}

TEST(Calc, NamesInLoop) {
    for (int n : {1, 2}) {
        EXPECT_EQ(add(n, 0), n);
    }
}

TEST(Calc, ReturnsEarly) {
    if (skip()) return;
    EXPECT_EQ(add(1, 1), 2);
}
"""

DOCTEST = """#include <doctest/doctest.h>

TEST_CASE("adds small numbers") {
    CHECK(add(1, 2) == 3);
    REQUIRE_FALSE(even(3));
}

TEST_CASE("names the user", "[text]") {
    CHECK(name() == "ada");
    SECTION("inside a section") {
        CHECK(add(2, 2) == 4);
    }
}
"""

HARNESS = """#include "check.hpp"

TEST(at_follows_the_wrap_around) {
    CHECK(buf.at(0) == 2);
}
"""


def all_lines(text: str) -> set[int]:
    return set(range(1, len(text.splitlines()) + 1))


def test_googletest_cases_get_twins_of_their_own_body_checks_beside_them() -> None:
    text, twins = make_twins(GTEST, all_lines(GTEST), random.Random(3), limit=10)
    # checks of the test's own body; none in a loop, none after a return
    assert {t.original for t in twins} == {
        "Calc.AddsSmall",
        "Calc.Negates",
        "CalcFixture.KnowsEven",
    }
    for twin in twins:
        suite, name = twin.twin.split(".")
        assert suite == twin.original.split(".")[0] and twin.twin != twin.original
        assert re.search(rf"^TEST(?:_F)?\({suite}, {name}\)", text, re.MULTILINE), twin
    assert text.count("EXPECT_EQ(add(2, 3), 5);") == 1 and text.count("EXPECT_EQ(add(2, 3), ") == 2
    assert text.count("EXPECT_EQ(-3, value);") == 1 and text.count("EXPECT_EQ(-") == 2
    assert text.count("EXPECT_TRUE(even(4));") == 1 and text.count("EXPECT_FALSE(even(4));") == 1
    assert (
        text.count("EXPECT_EQ(add(n, 0), n);") == 1 and text.count("EXPECT_EQ(add(1, 1), 2);") == 1
    )
    assert make_twins(GTEST, all_lines(GTEST), random.Random(3), limit=10) == (text, twins)


def test_doctest_and_catch_cases_are_copied_under_another_name_in_words() -> None:
    for seed in range(20):
        text, twins = make_twins(DOCTEST, all_lines(DOCTEST), random.Random(seed), limit=10)
        assert {t.original for t in twins} == {"adds small numbers", "names the user"}
        for twin in twins:
            assert f'TEST_CASE("{twin.twin}"' in text and f'"{twin.twin}"' not in DOCTEST
        assert text.count('"names the user", "[text]")') == 1 and text.count('"[text]")') == 2
        # a value moved before a truth turned; nothing inside a section
        assert text.count("CHECK(add(1, 2) == 3);") == 1 and text.count("CHECK(add(1, 2) == ") == 2
        assert text.count("REQUIRE_FALSE(even(3));") == 2
        assert text.count('CHECK(name() == "ada");') == 1
        assert text.count("CHECK(add(2, 2) == 4);") == 2


def test_only_checks_on_lines_the_unseen_diff_adds_are_changed() -> None:
    line = GTEST.splitlines().index("    EXPECT_TRUE(even(4));") + 1
    text, twins = make_twins(GTEST, {line}, random.Random(1), limit=3)
    assert [t.original for t in twins] == ["CalcFixture.KnowsEven"]
    assert text.count("EXPECT_EQ(add(2, 3), 5);") == 1 and "EXPECT_FALSE(even(4));" in text


def test_a_projects_own_harness_registers_nothing_and_gets_no_twin() -> None:
    assert make_twins(HARNESS, all_lines(HARNESS), random.Random(0)) == (HARNESS, [])


def test_twin_names_keep_the_suite_and_the_style_and_take_no_name() -> None:
    rng = random.Random(0)
    taken = {"Calc.AddsSmall", "Calc.AddsSmallNumbers"}
    names = {twin_name("Calc.AddsSmall", ["Negates", "Numbers"], taken, rng) for _ in range(60)}
    assert not names & taken and all(n.startswith("Calc.") for n in names)
    assert all(re.fullmatch(r"Calc\.[A-Z]\w*", n) for n in names), names
    spaced = {twin_name("adds small numbers", ["user", "names"], set(), rng) for _ in range(30)}
    assert all(" " in n or n.isalpha() for n in spaced) and "adds small numbers" not in spaced
    snake = {twin_name("Calc.adds_small", ["Numbers"], set(), rng) for _ in range(20)}
    assert all(re.fullmatch(r"Calc\.[A-Za-z]\w*", n) for n in snake), snake


def test_names_declared_beside_the_file_are_taken(tmp_path: Path) -> None:
    (tmp_path / "calc_test.cpp").write_text(GTEST)
    (tmp_path / "other_test.cc").write_text('TEST(Other, Works) {}\nTEST_CASE("other case") {}\n')
    (tmp_path / "notes.txt").write_text("TEST(Not, Source) {}\n")
    assert declared_beside(tmp_path, "calc_test.cpp") == {"Other.Works", "other case"}


def test_twins_in_two_binaries_never_share_a_name(tmp_path: Path) -> None:
    """A case's id names its binary, not its file: a twin in one binary named as a twin (or
    a case) of another would be read as both, and the gold side's twins thrown away. Files
    in two directories, one name in both, the file's words too few to tell them apart."""
    case = 'TEST_CASE("negates") {{\n    CHECK(neg({0}) == -{0});\n}}\n'
    files = {"one/t.cpp": case.format(2), "two/t.cpp": case.format(3)}
    diffs = [new_file(path, text) for path, text in files.items()]
    for path, text in files.items():
        (tmp_path / path).parent.mkdir()
        (tmp_path / path).write_text(text)
    forms = {"cpp": twin_forms()["cpp"]}
    for seed in range(60):
        twins, _ = plant_twins(tmp_path, forms, diffs, random.Random(seed), 3)
        assert len(twins) == 2
        names = [t.twin for t in twins] + [t.original for t in twins[:1]]
        assert len(set(names)) == 3, (seed, twins)


def test_the_original_of_a_twin_id_split_from_its_binary_or_discovered() -> None:
    twin = Twin("cpp", "tests/calc_test.cpp", None, "Calc.Negates", "Calc.NegatesSmall")
    assert original_of(twin, "gtests::Calc.NegatesSmall") == "gtests::Calc.Negates"
    assert original_of(twin, "Calc.NegatesSmall") == "Calc.Negates"
    assert original_of(twin, "gtests::Calc.Negates") is None
    spaced = Twin("cpp", "tests/d.cpp", None, "adds small numbers", "adds numbers")
    assert original_of(spaced, "dtests::adds numbers") == "dtests::adds small numbers"
