"""A validation that read no test: does the output name a test the gold tests add?"""

from __future__ import annotations

from arena.tasks.schema import TaskKind, Validation
from arena.tasks.unnamed_tests import (
    GOLD_TESTS,
    MARK,
    REPOSITORY_TESTS,
    gold_test_names,
    names_none,
    repository_test_names,
)
from arena.validation import NO_TEST_RAN, note_unnamed_tests
from ci_runner import CIResult, CIStatus, StepResult
from tests.diffs import new_file

CPP_HARNESS = (
    "static void decodeFilterOctEmpty()\n{\n\tassert(decode(0) == 0);\n}\n\n"
    "void runTests()\n{\n\tdecodeFilterOctEmpty();\n}\n"
)


def test_the_names_the_gold_tests_define_in_any_language() -> None:
    patch = "".join(
        (
            new_file("demo/tests.cpp", CPP_HARNESS),
            new_file("t/test_a.py", "def test_slug_keeps_case():\n    assert f()\n"),
            new_file("a_test.go", "func (s *S) TestRecency(t *testing.T) {}\n"),
            new_file("tests/b.rs", "#[test]\nfn parses_units() {}\n"),
            new_file("g.cc", 'TEST(Split, KeepsEmpty) {}\nTEST_CASE("splits on commas") {}\n'),
        )
    )
    assert gold_test_names(patch) == {
        "decodeFilterOctEmpty",
        "runTests",
        "test_slug_keeps_case",
        "TestRecency",
        "parses_units",
        "KeepsEmpty",
        "splits on commas",
    }
    assert gold_test_names(new_file("x.c", "int main(void) { return f(); }\n")) == set()


def test_output_naming_none_of_them_is_told_apart_from_output_naming_one() -> None:
    names = gold_test_names(new_file("demo/tests.cpp", CPP_HARNESS))
    assert names_none(names, ["cc -o tests demo/tests.cpp", "make: 'test' is up to date."])
    assert not names_none(names, ["FAILED: decodeFilterOctEmpty"])
    assert not names_none(frozenset(), ["anything"])  # nothing to look for: nothing said


def _after(log: str, exit_code: int = 0) -> CIResult:
    step = StepResult(name="test", exit_code=exit_code, duration_s=0.1, log=log)
    return CIResult(status=CIStatus.ERROR, steps=(step,), error="the ctest report names no tests")


def test_a_verdict_of_no_test_read_says_when_the_output_names_no_gold_test() -> None:
    test_patch = new_file("demo/tests.cpp", CPP_HARNESS)
    verdict = Validation(valid=False, kind=TaskKind.GOLD_JUDGED, reason=f"{NO_TEST_RAN} (error)")
    noted = note_unnamed_tests(verdict, test_patch, [_after("all good")] * 2, _never_read)
    assert noted.reason is not None and noted.reason.endswith(f"{MARK} {GOLD_TESTS}")
    assert (
        note_unnamed_tests(verdict, test_patch, [_after("decodeFilterOctEmpty ok")] * 2) == verdict
    )
    assert note_unnamed_tests(verdict, test_patch, [_after("boom", exit_code=2)] * 2) == verdict
    other = verdict.model_copy(update={"reason": "no test fails without the gold patch"})
    assert note_unnamed_tests(other, test_patch, [_after("all good")] * 2) == other


def test_a_test_whose_body_the_gold_tests_change_is_named_by_its_hunk() -> None:
    changed = (
        "diff --git a/demo/tests.cpp b/demo/tests.cpp\n"
        "--- a/demo/tests.cpp\n+++ b/demo/tests.cpp\n"
        "@@ -616,3 +616,3 @@ static void decodeVertexDeltas()\n"
        " \tstd::vector<unsigned char> buffer;\n"
        "-\tbuffer.resize(encode(data, 2));\n"
        "+\tbuffer.resize(encode(data, 2, -1));\n"
        " \tassert(decode(buffer) == 0);\n"
    )
    assert gold_test_names(changed) == {"decodeVertexDeltas"}
    context_only = changed.replace("-\tbuffer.resize(encode(data, 2));\n", " x\n").replace(
        "+\tbuffer.resize(encode(data, 2, -1));\n", ""
    )
    assert gold_test_names(context_only) == set()


def _never_read() -> frozenset[str]:
    raise AssertionError("the repository is read only when the gold tests name no test")


REPOSITORY = {
    "demo/tests.cpp": CPP_HARNESS,
    "src/vertexcodec.cpp": "static void decodeVertexBlock(const char* data)\n{\n}\n",
    "tests/test_cli.py": "def test_cli_prints_help():\n    pass\n",
    "pkg/cache_test.go": "func TestEvictsOldest(t *testing.T) {}\n",
    "tests/data/huge.txt": "def test_not_a_source():\n",
    "tools/test_runner.sh": "function shellHelper() {}\n",
}


def test_the_names_the_repositorys_test_sources_define_and_no_others() -> None:
    names = repository_test_names(REPOSITORY, REPOSITORY.get)
    assert names == {"decodeFilterOctEmpty", "runTests", "test_cli_prints_help", "TestEvictsOldest"}
    assert repository_test_names(["demo/tests.cpp"], lambda path: None) == set()  # binary


def test_a_line_without_gold_tests_is_judged_by_the_tests_its_repository_defines() -> None:
    verdict = Validation(valid=False, kind=TaskKind.CI_JUDGED, reason=f"{NO_TEST_RAN} (error)")

    def defined() -> frozenset[str]:
        return repository_test_names(REPOSITORY, REPOSITORY.get)

    silent = [_after("cc -o tests demo/tests.cpp && ./tests demo/pirate.obj")] * 2
    noted = note_unnamed_tests(verdict, "", silent, defined)
    assert noted.reason is not None and noted.reason.endswith(f"{MARK} {REPOSITORY_TESTS}")
    naming = [_after("PASS TestEvictsOldest")] * 2
    assert note_unnamed_tests(verdict, "", naming, defined) == verdict
    # gold tests that define no test (a fixture file) are no names either
    fixture = new_file("tests/data/input.json", "{}\n")
    assert note_unnamed_tests(verdict, fixture, silent, defined) == noted
    assert note_unnamed_tests(verdict, "", silent) == verdict  # nothing to look for
