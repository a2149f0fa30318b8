"""Which report ids a test patch owns: changed lines mapped to test cases, per language."""

from __future__ import annotations

import difflib

import pytest

from arena.hunks import split_diff
from arena.ownership import owned_test_ids
from arena.ownership.changes import apply_file, file_changes, file_paths
from ci_runner.pipeline import ReportFormat
from ci_runner.reports import parse_report


def unified(path: str, before: str | None, after: str | None) -> str:
    """A git-style diff from literal file texts (None: the file is absent on that side)."""
    old = (before or "").splitlines(keepends=True)
    new = (after or "").splitlines(keepends=True)
    body = "".join(
        difflib.unified_diff(
            old,
            new,
            "/dev/null" if before is None else f"a/{path}",
            "/dev/null" if after is None else f"b/{path}",
        )
    )
    return f"diff --git a/{path} b/{path}\n{body}"


def owned(files: dict[str, str], changes: dict[str, str | None], report: list[str]) -> set[str]:
    """The ids of `report` that a diff turning `files` into `changes` owns."""
    diff = "".join(unified(path, files.get(path), after) for path, after in changes.items())
    return owned_test_ids(diff, files.get, report)


# --- applying a test patch in memory -------------------------------------------------------

BASE = "".join(f"line {n}\n" for n in range(1, 21))


def test_a_hunk_applies_at_its_line_and_records_removed_and_added_lines() -> None:
    after = BASE.replace("line 5\n", "line five\nline 5b\n")
    (hunk_file,) = split_diff(unified("f.txt", BASE, after))
    new_text, removed, added = apply_file(BASE, hunk_file.hunks)
    assert new_text == after and removed == {5} and added == {5, 6}


def test_a_hunk_whose_line_numbers_are_off_is_placed_where_its_lines_are() -> None:
    """Models and other patches shift lines; git apply finds the hunk at an offset."""
    after = BASE.replace("line 12\n", "line twelve\n")
    diff = unified("f.txt", BASE, after).replace("@@ -9,7 +9,7 @@", "@@ -3,7 +3,7 @@")
    new_text, removed, added = apply_file(BASE, split_diff(diff)[0].hunks)
    assert new_text == after and removed == {12} and added == {12}


def test_a_hunk_with_stale_context_applies_with_fuzz() -> None:
    after = BASE.replace("line 12\n", "line twelve\n")
    diff = unified("f.txt", BASE, after).replace(" line 9\n", " line nine\n")
    new_text, removed, added = apply_file(BASE, split_diff(diff)[0].hunks)
    assert new_text == after and removed == {12} and added == {12}


def test_new_deleted_and_plain_files_have_their_paths() -> None:
    diff = unified("tests/new.py", None, "x = 1\n") + unified("tests/old.py", "y = 2\n", None)
    created, deleted = file_changes(diff, {"tests/old.py": "y = 2\n"}.get)
    assert (created.old_path, created.new_path, created.added) == (None, "tests/new.py", {1})
    assert (deleted.old_path, deleted.new_path, deleted.removed) == ("tests/old.py", None, {1})
    assert file_paths(["--- a/x.py\n", "+++ b/x.py\n"]) == ("x.py", "x.py")
    assert file_paths(["--- x.py\n", "+++ x.py\n"]) == ("x.py", "x.py")
    assert file_paths(["--- a/x.py\n", "+++ a/x.py\n"]) == ("a/x.py", "a/x.py")


# --- Python --------------------------------------------------------------------------------

PY_TESTS = """import pytest

from calc import add, neg


def helper():
    return 2


def test_add():
    assert add(1, 1) == helper()


class TestNeg:
    def setup_method(self):
        self.x = 1

    @pytest.mark.parametrize(("a", "b"), [(1, -1), (2, -2)])
    def test_neg(self, a, b):
        assert neg(a) == b

    def test_zero(self):
        assert neg(0) == 0

    class TestNested:
        def test_deep(self):
            assert neg(neg(1)) == 1
"""
PY_REPORT = [
    "tests.test_calc::test_add",
    "tests.test_calc.TestNeg::test_neg[1--1]",
    "tests.test_calc.TestNeg::test_neg[2--2]",
    "tests.test_calc.TestNeg::test_zero",
    "tests.test_calc.TestNeg.TestNested::test_deep",
    "tests.test_other::test_add",
]


def _py(after: str, root: str = "", report: list[str] = PY_REPORT) -> set[str]:
    path = f"{root}tests/test_calc.py"
    return owned({path: PY_TESTS}, {path: after}, report)


def test_python_a_strengthened_method_owns_all_its_parametrizations_and_nothing_else() -> None:
    after = PY_TESTS.replace(
        "        assert neg(a) == b\n", "        assert neg(a) == b\n        assert neg(b) == a\n"
    )
    assert _py(after) == {
        "tests.test_calc.TestNeg::test_neg[1--1]",
        "tests.test_calc.TestNeg::test_neg[2--2]",
    }


def test_python_a_changed_parametrize_decorator_belongs_to_its_test() -> None:
    after = PY_TESTS.replace("(2, -2)]", "(2, -2), (3, -3)]")
    assert _py(after) == {
        "tests.test_calc.TestNeg::test_neg[1--1]",
        "tests.test_calc.TestNeg::test_neg[2--2]",
    }


def test_python_changes_outside_any_test_own_nothing() -> None:
    """A helper, a setup method and an import are no test's definition."""
    after = (
        PY_TESTS.replace("return 2", "return 1 + 1")
        .replace("self.x = 1", "self.x = 2")
        .replace("import pytest\n", "import pytest\nimport math\n")
    )
    assert _py(after) == set()


def test_python_nested_classes_removed_lines_and_node_id_reports() -> None:
    after = PY_TESTS.replace("            assert neg(neg(1)) == 1\n", "            pass\n")
    assert _py(after) == {"tests.test_calc.TestNeg.TestNested::test_deep"}
    node_ids = ["tests/test_calc.py::test_add", "tests/test_calc.py::TestNeg::test_zero"]
    after = PY_TESTS.replace("assert neg(0) == 0", "assert neg(0) == -0")
    assert _py(after, report=node_ids) == {"tests/test_calc.py::TestNeg::test_zero"}


def test_python_a_pipeline_run_from_a_subdirectory_still_maps() -> None:
    """pytest run in `backend/` names the file `tests.test_calc`, not `backend.tests...`."""
    after = PY_TESTS.replace("add(1, 1) == helper()", "add(2, 2) == 4")
    assert _py(after, root="backend/") == {"tests.test_calc::test_add"}
    assert _py(after, root="backend/", report=["backend.tests.test_calc::test_add"]) == {
        "backend.tests.test_calc::test_add"
    }
    assert _py(after, root="backend/", report=["frontend.tests.test_calc::test_add"]) == set()


# --- Go ------------------------------------------------------------------------------------

GO_TESTS = """package parse

import "testing"

func TestParse(t *testing.T) {
	t.Run("empty input", func(t *testing.T) {
		if _, err := Parse(""); err == nil {
			t.Fatal("want an error")
		}
	})
	t.Run("number", func(t *testing.T) {
		t.Run("negative", func(t *testing.T) {
			check(t, "-1")
		})
		check(t, "1")
	})
}

func TestOther(t *testing.T) {
	check(t, "2")
}

func check(t *testing.T, s string) {
	if _, err := Parse(s); err != nil {
		t.Fatal(err)
	}
}
"""
GO_MOD = "module example.com/m\n\ngo 1.21\n"
PKG = "example.com/m/internal/parse"
GO_REPORT = [
    f"{PKG}::TestParse",
    f"{PKG}::TestParse/empty_input",
    f"{PKG}::TestParse/empty_input#01",
    f"{PKG}::TestParse/number",
    f"{PKG}::TestParse/number/negative",
    f"{PKG}::TestOther",
    "example.com/m/internal/other::TestParse/empty_input",
]


def _go(after: str, root: str = "") -> set[str]:
    path = f"{root}internal/parse/parse_test.go"
    files = {path: GO_TESTS, f"{root}go.mod": GO_MOD}
    return owned(files, {path: after}, GO_REPORT)


def test_go_a_change_inside_a_subtest_owns_that_subtest_not_its_parent() -> None:
    after = GO_TESTS.replace('t.Fatal("want an error")', 't.Fatalf("want an error for %q", "")')
    assert _go(after) == {f"{PKG}::TestParse/empty_input", f"{PKG}::TestParse/empty_input#01"}


def test_go_a_nested_subtest_and_a_whole_test_function() -> None:
    after = GO_TESTS.replace('check(t, "-1")', 'check(t, "-10")')
    assert _go(after) == {f"{PKG}::TestParse/number/negative"}
    after = GO_TESTS.replace('check(t, "2")', 'check(t, "3")')
    assert _go(after) == {f"{PKG}::TestOther"}


def test_go_a_helper_change_owns_nothing_and_packages_come_from_go_mod() -> None:
    assert _go(GO_TESTS.replace("t.Fatal(err)", "t.Helper()\n\t\tt.Fatal(err)")) == set()
    after = GO_TESTS.replace('t.Fatal("want an error")', 't.Fatal("no error")')
    assert _go(after, root="go/") == {
        f"{PKG}::TestParse/empty_input",
        f"{PKG}::TestParse/empty_input#01",
    }


# --- Rust ----------------------------------------------------------------------------------

RS_UNITS = """//! Units.
//!
//! ```
//! assert!(true);
//! ```

/// Millis.
///
/// ```
/// assert_eq!(dt::units::millis(), 1);
/// ```
pub fn millis() -> u32 {
    1
}

impl Unit {
    /// The suffix.
    ///
    /// ```
    /// assert_eq!(dt::units::Unit::Ms.suffix(), "ms");
    /// ```
    pub fn suffix(&self) -> &str {
        "ms"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_milli() {
        assert_eq!(millis(), 1);
    }

    mod inner {
        #[test]
        fn deep() {
            assert!(true);
        }
    }
}
"""
RS_REPORT = [
    "src/lib.rs::units::tests::one_milli",
    "src/lib.rs::units::tests::inner::deep",
    "src/lib.rs::tests::one_milli",
    "tests/integ.rs::one_milli",
    "doc:dt::src/units.rs - units",
    "doc:dt::src/units.rs - units::millis",
    "doc:dt::src/units.rs - units::Unit::suffix",
    "doc:dt::src/lib.rs - double",
]


def _rs(path: str, before: str, after: str, report: list[str] = RS_REPORT) -> set[str]:
    return owned({path: before}, {path: after}, report)


def test_rust_unit_tests_in_a_module_file_are_named_by_module_path() -> None:
    after = RS_UNITS.replace(
        "assert_eq!(millis(), 1);", "assert_eq!(millis(), 1);\n        assert!(millis() > 0);"
    )
    assert _rs("src/units.rs", RS_UNITS, after) == {"src/lib.rs::units::tests::one_milli"}
    after = RS_UNITS.replace("assert!(true);\n        }", "assert!(!false);\n        }")
    assert _rs("src/units.rs", RS_UNITS, after) == {"src/lib.rs::units::tests::inner::deep"}


def test_rust_a_test_attribute_belongs_to_its_function() -> None:
    after = RS_UNITS.replace(
        "    #[test]\n    fn one_milli", "    #[test]\n    #[ignore]\n    fn one_milli"
    )
    assert _rs("src/units.rs", RS_UNITS, after) == {"src/lib.rs::units::tests::one_milli"}


def test_rust_integration_tests_and_a_package_in_a_subdirectory() -> None:
    before = "#[test]\nfn one_milli() {\n    assert!(true);\n}\n"
    after = before.replace("assert!(true)", "assert!(1 == 1)")
    assert _rs("tests/integ.rs", before, after) == {"tests/integ.rs::one_milli"}
    assert _rs("rust/tests/integ.rs", before, after) == {"tests/integ.rs::one_milli"}
    changed = RS_UNITS.replace("assert_eq!(millis(), 1);", "assert_eq!(millis(), 2 - 1);")
    assert _rs("rust/src/units.rs", RS_UNITS, changed) == {"src/lib.rs::units::tests::one_milli"}


def test_rust_doc_comment_changes_own_the_items_doctests() -> None:
    after = RS_UNITS.replace(
        "/// assert_eq!(dt::units::millis(), 1);",
        "/// assert_eq!(dt::units::millis(), 1);\n/// assert!(dt::units::millis() > 0);",
    )
    assert _rs("src/units.rs", RS_UNITS, after) == {"doc:dt::src/units.rs - units::millis"}
    after = RS_UNITS.replace('Unit::Ms.suffix(), "ms"', "Unit::Ms.suffix().len(), 2")
    assert _rs("src/units.rs", RS_UNITS, after) == {"doc:dt::src/units.rs - units::Unit::suffix"}
    after = RS_UNITS.replace("//! assert!(true);", "//! assert!(!false);")
    assert _rs("src/units.rs", RS_UNITS, after) == {"doc:dt::src/units.rs - units"}


def test_rust_doctest_ids_carry_no_line_numbers() -> None:
    """An equivalent fix of another length moves the doc block; the id must stay the same."""

    def report(line: int) -> bytes:
        return (
            "   Doc-tests dt\n\nrunning 2 tests\n"
            f"test src/lib.rs - double (line {line}) ... ok\n"
            f"test src/lib.rs - double (line {line + 4}) - compile fail ... ok\n"
            "test src/lib.rs - (line 3) ... ok\n"
        ).encode()

    short = parse_report(ReportFormat.LIBTEST, report(14))
    long = parse_report(ReportFormat.LIBTEST, report(31))
    assert short == long
    assert set(short) == {
        "doc:dt::src/lib.rs - double",
        "doc:dt::src/lib.rs - double - compile fail",
        "doc:dt::src/lib.rs -",
    }


# --- C++ -----------------------------------------------------------------------------------

CPP_TESTS = """#include "check.hpp"
#include <doctest/doctest.h>

TEST(push_and_pop) {
    CHECK(1 == 1);
}

static void split_simple() {
    CHECK(split("a,b", ',').size() == 2);
}

namespace suite {
TEST_F(RingTest, Wraps) {
    EXPECT_EQ(ring.at(0), 2);
}
}

TEST_SUITE("strings") {
    TEST_CASE("trim keeps inner spaces") {
        SUBCASE("left") {
            CHECK(trim(" a b") == "a b");
        }
    }
}

static const Case kCases[] = {
    {"split_simple", split_simple},
};
"""
CPP_REPORT = [
    "push_and_pop",
    "split_simple",
    "RingTest.Wraps",
    "Instance/RingTest.Wraps/0",
    "trim keeps inner spaces",
    "other",
]


def _cpp(after: str) -> set[str]:
    return owned({"tests/test_x.cpp": CPP_TESTS}, {"tests/test_x.cpp": after}, CPP_REPORT)


@pytest.mark.parametrize(
    ("old", "new", "ids"),
    [
        ("CHECK(1 == 1);", "CHECK(2 == 2);", {"push_and_pop"}),
        ("size() == 2", "size() == 2u", {"split_simple"}),
        ("ring.at(0), 2", "ring.at(0), 3", {"RingTest.Wraps", "Instance/RingTest.Wraps/0"}),
        ('"a b");', '"a b");\n            CHECK(trim("") == "");', {"trim keeps inner spaces"}),
        ('{"split_simple", split_simple},', '{"split_simple", split_simple}, {"x", x},', set()),
    ],
)
def test_cpp_changes_map_to_ctest_case_names(old: str, new: str, ids: set[str]) -> None:
    assert _cpp(CPP_TESTS.replace(old, new)) == ids


GTEST_TESTS = """#include <gtest/gtest.h>

template <typename T> class Typed : public ::testing::Test {};
using Types = ::testing::Types<int, char>;
TYPED_TEST_SUITE(Typed, Types);

TYPED_TEST(Typed, Zero) {
    EXPECT_EQ(TypeParam(0), TypeParam());
}

TYPED_TEST_P(Pattern, One) {
    EXPECT_TRUE(true);
}

TEST_P(Param, Positive) {
    EXPECT_GT(GetParam(), 0);
}

TEST(Math, Adds) {
    EXPECT_EQ(1 + 1, 2);
}

static void check() {
    EXPECT_FALSE(false);
}
"""
# as ctest names them (gtest_discover_tests, with and without pretty type names) and as a
# binary split into its cases names them (`<ctest name>::<case>`)
GTEST_REPORT = [
    "Typed/0.Zero",
    "Typed/1.Zero",
    "Typed/int.Zero",
    "unit_tests::Typed/0.Zero",
    "Typed.Zero",
    "Other/0.Zero",
    "Typed/0.Zeros",
    "Inst/Pattern/0.One",
    "unit_tests::Inst/Pattern/1.One",
    "Small/Param.Positive/0",
    "unit_tests::Small/Param.Positive/1",
    "Math.Adds",
    "unit_tests::Math.Adds",
    "unit.Math.Adds",
    "unit_tests::Math.Adds2",
    "Parser.check",
    "unit_tests::check",
]


@pytest.mark.parametrize(
    ("old", "new", "ids"),
    [
        (
            "TypeParam(0), TypeParam()",
            "TypeParam(), TypeParam(0)",
            {"Typed/0.Zero", "Typed/1.Zero", "Typed/int.Zero", "unit_tests::Typed/0.Zero"}
            | {"Typed.Zero"},
        ),
        (
            "EXPECT_TRUE(true);",
            "EXPECT_TRUE(1);",
            {
                "Inst/Pattern/0.One",
                "unit_tests::Inst/Pattern/1.One",
            },
        ),
        (
            "GetParam(), 0",
            "GetParam(), -1",
            {
                "Small/Param.Positive/0",
                "unit_tests::Small/Param.Positive/1",
            },
        ),
        ("1 + 1, 2", "2 + 2, 4", {"Math.Adds", "unit_tests::Math.Adds", "unit.Math.Adds"}),
        # a helper function owns no gtest test of the same name
        ("EXPECT_FALSE(false);", "EXPECT_FALSE(0);", {"unit_tests::check"}),
    ],
)
def test_typed_and_parameterized_gtest_cases_own_their_instances_under_any_prefix(
    old: str, new: str, ids: set[str]
) -> None:
    files = {"tests/gtests.cpp": GTEST_TESTS}
    after = GTEST_TESTS.replace(old, new)
    assert owned(files, {"tests/gtests.cpp": after}, GTEST_REPORT) == ids


DOCTEST_TESTS = """#include <doctest/doctest.h>

TEST_CASE("trim keeps inner spaces") {
    CHECK(trim(" a b") == "a b");
}

TEST_CASE_TEMPLATE("zero is default (int)", T, int, unsigned char, std::string) {
    CHECK(T() == T{});
}

TEST_CASE("split") {
    SUBCASE("on commas") {
        CHECK(split("a,b", ',').size() == 2);
    }
}
"""
DOCTEST_REPORT = [
    "unit_tests::trim keeps inner spaces",
    "trim keeps inner spaces",
    "unit.trim keeps inner spaces",
    "unit_tests::trim keeps inner spaces too",
    "unit_tests::zero is default (int)<int>",
    "unit_tests::zero is default (int)<std::string>",
    "unit_tests::split",
    "split/on commas",  # a JUnit subcase of the case
    "unit_tests::split lines",
]


@pytest.mark.parametrize(
    ("old", "new", "ids"),
    [
        (
            '== "a b");',
            '== "a b");\n    CHECK(trim("") == "");',
            {
                "unit_tests::trim keeps inner spaces",
                "trim keeps inner spaces",
                "unit.trim keeps inner spaces",
            },
        ),
        (
            "T() == T{}",
            "T{} == T()",
            {
                "unit_tests::zero is default (int)<int>",
                "unit_tests::zero is default (int)<std::string>",
            },
        ),
        ("size() == 2", "size() == 2u", {"unit_tests::split", "split/on commas"}),
    ],
)
def test_doctest_cases_own_their_ids_from_a_split_binary_and_their_templates(
    old: str, new: str, ids: set[str]
) -> None:
    files = {"tests/strings.cpp": DOCTEST_TESTS}
    after = DOCTEST_TESTS.replace(old, new)
    assert owned(files, {"tests/strings.cpp": after}, DOCTEST_REPORT) == ids


def test_a_template_case_does_not_swallow_the_cases_after_it() -> None:
    """tree-sitter fails on `int, char` as macro arguments; the cases after one still parse."""
    from arena.languages.cpp import cpp_cases

    cases = cpp_cases("t.cpp", DOCTEST_TESTS, lambda _: None)
    spans = {case.label: (case.start, case.end) for case in cases}
    assert spans == {
        "trim keeps inner spaces": (3, 5),
        "zero is default (int)": (7, 9),
        "split": (11, 15),
    }


def test_a_new_case_whose_diff_re_adds_the_closing_brace_before_it_owns_only_itself() -> None:
    """difflib (and a model) may align a new case after the last `}` of the one before it:
    that case's definition is unchanged, so it is not the reviewer's."""
    before = "TEST(Calc, Adds) {\n    EXPECT_EQ(add(2, 3), 5);\n}\n\nTEST(Calc, Subs) {}\n"
    diff = (
        "diff --git a/t.cpp b/t.cpp\n--- a/t.cpp\n+++ b/t.cpp\n@@ -1,4 +1,8 @@\n"
        " TEST(Calc, Adds) {\n     EXPECT_EQ(add(2, 3), 5);\n+}\n+\n+TEST(Calc, Negates) {\n"
        "+    EXPECT_EQ(neg(3), -3);\n }\n \n"
    )
    report = ["t::Calc.Adds", "t::Calc.Negates", "t::Calc.Subs"]
    assert owned_test_ids(diff, {"t.cpp": before}.get, report) == {"t::Calc.Negates"}
    moved = unified("t.cpp", before, "TEST(Calc, Subs) {}\n\n" + before.split("\n\n")[0] + "\n")
    assert owned_test_ids(moved, {"t.cpp": before}.get, report) == set()  # moved whole


def test_files_of_other_languages_own_nothing() -> None:
    assert (
        owned({"CMakeLists.txt": "set(T a)\n"}, {"CMakeLists.txt": "set(T a b)\n"}, ["a", "b"])
        == set()
    )


def test_go_a_subtest_name_may_hold_colons() -> None:
    before = 'package m\n\nfunc TestX(t *testing.T) {\n\tt.Run("a::b c", func(t *testing.T) {\n\t\tcheck(t)\n\t})\n}\n'
    after = before.replace("check(t)", "check(t)\n\t\tcheck(t)")
    files = {"x_test.go": before, "go.mod": "module ex.com/m\n"}
    report = ["ex.com/m::TestX", "ex.com/m::TestX/a::b_c", "ex.com/n::TestX/a::b_c"]
    assert owned(files, {"x_test.go": after}, report) == {"ex.com/m::TestX/a::b_c"}


def test_a_plain_diff_as_models_write_it_maps_like_the_runner_reads_it() -> None:
    """No `diff --git`, no a/ b/ prefixes, wrong counts, a blank context line without its space."""
    diff = (
        "Here is the test:\n```diff\n--- tests/test_calc.py\n+++ tests/test_calc.py\n"
        "@@ -20,4 +20,9 @@\n         assert neg(a) == b\n\n     def test_zero(self):\n"
        "         assert neg(0) == 0\n+        assert neg(-0) == 0\n"
        "@@ -30,3 +30,3 @@\n         def test_deep(self):\n"
        "-            assert neg(neg(1)) == 1\n+            assert neg(neg(2)) == 2\n```\n"
    )
    files = {"tests/test_calc.py": PY_TESTS}
    assert owned_test_ids(diff, files.get, PY_REPORT) == {
        "tests.test_calc.TestNeg::test_zero",
        "tests.test_calc.TestNeg.TestNested::test_deep",
    }


def test_tests_defined_at_base_in_a_touched_file_are_not_new() -> None:
    from arena.ownership import base_test_ids

    base = {"tests/test_calc.py": "def test_old():\n    assert True\n"}
    diff = (
        "diff --git a/tests/test_calc.py b/tests/test_calc.py\n"
        "--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n"
        "@@ -1,2 +1,5 @@\n def test_old():\n     assert True\n+\n+def test_new():\n+    assert 1\n"
    )
    ids = {"tests/test_calc.py::test_old", "tests/test_calc.py::test_new", "other.py::test_x"}
    assert base_test_ids(diff, base.get, ids) == {"tests/test_calc.py::test_old"}
