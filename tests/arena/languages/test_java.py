"""Java's test cases as Surefire names them: the class's binary name and the method."""

from __future__ import annotations

from arena.languages import task_profile
from arena.languages.java import surefire_method

SOURCE = """package demo.calc;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;

class CalculatorTest {
    @Test
    void adds() {
        assert 1 + 1 == 2;
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void addsMany(int n) {
        assert n > 0;
    }

    void helper() {
    }

    @Nested
    class Division {
        @org.junit.jupiter.api.Test
        void byZeroThrows() {
        }
    }
}
"""


def test_each_test_method_owns_its_surefire_ids() -> None:
    cases = task_profile("java").find_cases(
        "src/test/java/demo/calc/CalculatorTest.java", SOURCE, lambda _: None
    )
    labels = [c.label for c in cases]
    assert labels == [
        "demo.calc.CalculatorTest::adds",
        "demo.calc.CalculatorTest::addsMany",
        "demo.calc.CalculatorTest$Division::byZeroThrows",
    ]
    adds, many, nested = cases
    assert adds.owns("demo.calc.CalculatorTest::adds") and not adds.owns(
        "demo.calc.CalculatorTest::addsMany(int)[1]"
    )
    assert many.owns("demo.calc.CalculatorTest::addsMany(int)[2]")
    assert nested.owns("demo.calc.CalculatorTest$Division::byZeroThrows")
    assert not nested.owns("demo.calc.CalculatorTest::byZeroThrows")
    assert adds.spans(9) and not adds.spans(20)


def test_surefire_case_names_lose_their_arguments_and_index() -> None:
    assert surefire_method("addsMany(int, int, int)[1]") == "addsMany"
    assert surefire_method("repeated()[2]") == "repeated"
    assert surefire_method("adds[0]") == "adds"
    assert surefire_method("adds") == "adds"


def test_java_files_and_test_files() -> None:
    profile = task_profile("java")
    assert profile.is_language_file("core/src/main/java/demo/Calc.java")
    assert profile.is_language_file("pom.xml")
    rules = profile.patch_rules
    assert rules.test_files is not None
    assert rules.test_files.search("CalcTest.java") and rules.test_files.search("CalcIT.java")
    assert not rules.test_files.search("Calc.java")
