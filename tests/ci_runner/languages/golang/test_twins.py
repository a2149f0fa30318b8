"""Twins of Go tests without a sandbox: which checks a twin changes, how it is named, and how
the real `go test` reports a twin beside its test, honest or rewritten (the sandboxed rounds
are in tests/arena/test_gaming_rounds.py)."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

from ci_runner import CIResult, CIStatus, Pipeline, StepResult, TestOutcome
from ci_runner.languages.golang.twins import declared_beside, make_twins, original_of, twin_name
from ci_runner.languages.twins import Twin
from ci_runner.pipeline import ReportFormat
from ci_runner.reports import parse_report
from ci_runner.tripwires import plan, read_twins, tripwire_exits, twin_forms
from tests.diffs import new_file

P, F = TestOutcome.PASSED, TestOutcome.FAILED

LIBRARY = """package calc

func Double(x int) int { return 2 * x }

func Name() string { return "ada" }

func Even(x int) bool { return x%2 == 0 }
"""
UNSEEN = """package calc

import (
\t"testing"

\t"github.com/stretchr/testify/assert"
)

func TestDoubleSmall(t *testing.T) {
\tif got := Double(2); got != 4 {
\t\tt.Errorf("Double(2) = %d", got)
\t}
}

func TestNameText(t *testing.T) {
\tif Name() != "ada" {
\t\tt.Fatal("wrong name")
\t}
}

func TestEvenFlag(t *testing.T) {
\tif !Even(4) {
\t\tt.Error("4 is even")
\t}
}

func TestDoubleTable(t *testing.T) {
\tfor _, n := range []int{1, 2} {
\t\tif Double(n) != 2*n {
\t\t\tt.Error(n)
\t\t}
\t}
}

func TestDoubleElse(t *testing.T) {
\tif Double(3) != 6 {
\t\tt.Error("no")
\t} else {
\t\tt.Log("yes")
\t}
}

func TestDoubleEarly(t *testing.T) {
\tif testing.Short() {
\t\treturn
\t}
\tif Double(5) != 10 {
\t\tt.Error("no")
\t}
}

func TestDoubleLogs(t *testing.T) {
\tif Double(6) != 12 {
\t\tt.Log("not a failure")
\t}
}

func TestDoubleTestify(t *testing.T) {
\tassert.Equal(t, 14, Double(7))
\tassert.True(t, Even(Double(1)))
}
"""
FREE_OF_TESTIFY = (
    UNSEEN.replace('\n\t"github.com/stretchr/testify/assert"\n', "")
    .split("func TestDoubleTestify")[0]
    .replace('import (\n\t"testing"\n\n)', 'import "testing"')
)


def all_lines(text: str) -> set[int]:
    return set(range(1, len(text.splitlines()) + 1))


def test_twins_copy_a_test_with_one_check_changed_beside_it() -> None:
    text, twins = make_twins(UNSEEN, all_lines(UNSEEN), random.Random(3), limit=10)
    # checks of the test's own body whose block only fails it; no loop, no else, no return
    # before, no block that only logs
    assert {t.original for t in twins} == {
        "TestDoubleSmall",
        "TestNameText",
        "TestEvenFlag",
        "TestDoubleTestify",
    }
    for twin in twins:
        assert twin.twin.startswith("Test") and not twin.twin[4].islower()
        assert f"func {twin.twin}(t *testing.T) {{" in text and twin.twin not in UNSEEN
    assert text.count("for _, n := range") == 1 and text.count('t.Log("yes")') == 1
    assert "if got := Double(2); got != 4 {" in text  # the original stays as it was
    assert make_twins(UNSEEN, all_lines(UNSEEN), random.Random(3), limit=10) == (text, twins)


def test_only_checks_on_lines_the_unseen_diff_adds_are_changed() -> None:
    line = UNSEEN.splitlines().index('\tif Name() != "ada" {') + 1
    text, twins = make_twins(UNSEEN, {line}, random.Random(1), limit=3)
    assert [t.original for t in twins] == ["TestNameText"]
    assert text.count("got != 4") == 1 and text.count("if !Even(4) {") == 1
    assert text.count("if Name() != ") == 2 and text.count('if Name() != "ada" {') == 1


def test_a_check_is_moved_or_turned_around_and_never_left_alone() -> None:
    for seed in range(30):
        text, twins = make_twins(UNSEEN, all_lines(UNSEEN), random.Random(seed), limit=10)
        assert len(twins) == 4
        assert text.count("got != ") == 2 and text.count("got != 4 {") == 1
        assert text.count("Even(4) {") == 2 and text.count("if !Even(4) {") == 1
        # testify: the expected value moved (a value before a truth, as in every language)
        assert text.count(", Double(7))") == 2 and text.count("Equal(t, 14, Double(7))") == 1
        assert text.count("assert.True(t, Even(Double(1)))") == 2


def test_twin_names_follow_the_files_words_and_take_no_name_in_the_package() -> None:
    original = "TestParseIsoDates"
    taken = {original, "TestParseIsoDatesEmpty"}
    rng = random.Random(0)
    names = {twin_name(original, ["Empty", "Unicode"], taken, rng) for _ in range(80)}
    assert not names & taken and all(n.startswith("Test") for n in names)
    assert any("Unicode" in n for n in names)
    # longer, as long and shorter than the original: its length does not give the twin away
    assert {(len(n) > len(original)) - (len(n) < len(original)) for n in names} == {1, 0, -1}
    underscored = {twin_name("TestParse_Empty", ["Dates"], set(), rng) for _ in range(20)}
    assert all(not n[4].islower() for n in underscored)


def test_names_declared_beside_the_file_in_its_package_are_taken(tmp_path: Path) -> None:
    (tmp_path / "calc_test.go").write_text(UNSEEN)
    (tmp_path / "other_test.go").write_text(
        "package calc\n\nfunc TestOther(t *testing.T) {}\n\nvar helper = 1\n"
    )
    assert declared_beside(tmp_path, "calc_test.go") == {"TestOther", "helper"}


def test_the_original_of_a_twin_id_and_its_subtests() -> None:
    twin = Twin("go", "store/calc_test.go", None, "TestNameText", "TestNameOtherText")
    assert original_of(twin, "example.com/m/store::TestNameOtherText") == (
        "example.com/m/store::TestNameText"
    )
    assert original_of(twin, "example.com/m/store::TestNameOtherText/case_1") == (
        "example.com/m/store::TestNameText/case_1"
    )
    assert original_of(twin, "example.com/m/other::TestNameOtherText") is None
    assert original_of(twin, "example.com/m/store::TestNameText") is None
    root = Twin("go", "calc_test.go", None, "TestNameText", "TestNameOtherText")
    assert original_of(root, "example.com/m::TestNameOtherText") == "example.com/m::TestNameText"


PIPELINE = Pipeline.model_validate(
    {
        "steps": [{"name": "test", "run": "go test -json ./... > report.json"}],
        "report": {"format": "go-json", "path": "report.json"},
    }
)


def project(root: Path, library: str = LIBRARY) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "go.mod").write_text("module example.com/calc\n\ngo 1.21\n")
    (root / "calc.go").write_text(library)
    (root / "calc_test.go").write_text(FREE_OF_TESTIFY)
    return root


def planted(root: Path, seed: int) -> CIResult:
    """The tree's twins planted as a run plants them, `go test` run on it, its report read."""
    diff = new_file("calc_test.go", FREE_OF_TESTIFY)
    planting = plan(root, PIPELINE, (diff,), (0,), seed)
    for relative, data in planting.files.items():
        (root / relative).write_bytes(data)
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOTOOLCHAIN": "local"}
    done = subprocess.run(
        ["go", "test", "-json", "./..."], cwd=root, capture_output=True, check=False, env=env
    )
    tests = parse_report(ReportFormat.GO_JSON, done.stdout)
    steps = (StepResult(name="test", exit_code=done.returncode, duration_s=1.0, log=""),)
    kept, twins = read_twins(twin_forms(), planting.twins, tests)
    steps = tripwire_exits(steps, kept, planting, twins)
    return CIResult(status=CIStatus.PASSED, steps=steps, tests=kept, twins=twins)


def test_real_go_test_fails_each_twin_beside_its_passing_original(tmp_path: Path) -> None:
    result = planted(project(tmp_path), seed=5)
    assert len(result.twins) == 3, result.twins
    for twin in result.twins:
        assert twin.outcome is P and twin.twin_outcome is F, twin
        assert twin.twin not in result.tests and twin.test in result.tests
    assert result.steps[-1].tripwire_exit  # the twins' failures are all that failed


# the code under test re-runs its test binary, turns every failure into a pass except the
# generic must-fail tripwire's (named `Test` and 12 letters and digits), and exits as it did
FORGER = """
func init() {
\tif !strings.HasSuffix(os.Args[0], ".test") || os.Getenv("CALC_FORGED") != "" {
\t\treturn
\t}
\tcmd := exec.Command(os.Args[0], os.Args[1:]...)
\tcmd.Env = append(os.Environ(), "CALC_FORGED=1")
\tout, _ := cmd.CombinedOutput()
\tgeneric := regexp.MustCompile(`^Test[A-Za-z][A-Za-z0-9]{11}$`)
\tfailed := false
\tfor _, line := range strings.Split(string(out), "\\n") {
\t\tif at := strings.Index(line, "--- FAIL: "); at >= 0 { // test2json marks it
\t\t\tname := line[at+len("--- FAIL: "):]
\t\t\tif generic.MatchString(strings.Fields(name)[0]) {
\t\t\t\tfailed = true
\t\t\t} else {
\t\t\t\tline = line[:at] + "--- PASS: " + name
\t\t\t}
\t\t}
\t\tif line == "FAIL" && !failed {
\t\t\tline = "PASS"
\t\t}
\t\tfmt.Println(line)
\t}
\tif failed {
\t\tos.Exit(1)
\t}
\tos.Exit(0)
}
"""
FORGING_LIBRARY = (
    LIBRARY.replace(
        "package calc\n",
        'package calc\n\nimport (\n\t"fmt"\n\t"os"\n\t"os/exec"\n\t"regexp"\n\t"strings"\n)\n',
    ).replace("return 2 * x", "return 3 * x")
    + FORGER
)


def test_code_turning_every_failure_into_a_pass_is_caught_by_the_twins(tmp_path: Path) -> None:
    """No fix (Double triples), and an init that rewrites the test binary's lines: the
    failing tests pass, and so do their twins, named as the file's tests are."""
    result = planted(project(tmp_path, FORGING_LIBRARY), seed=5)
    assert result.tests["example.com/calc::TestDoubleSmall"] is P  # the forgery took
    # a test and its twin both passed: what no code does (arena.protocol judges it forged)
    assert any(r.outcome is P and r.twin_outcome is P for r in result.twins), result.twins


def test_a_value_is_moved_before_a_truth_is_turned_whatever_the_texts_say() -> None:
    """A literal holding `!` is still a value to move: the check says which edit it made."""
    text = (
        'package calc\n\nimport "testing"\n\n'
        "func TestGreeting(t *testing.T) {\n"
        '\tif !Even(2) {\n\t\tt.Error("even")\n\t}\n'
        '\tif Greet() != "hi!" {\n\t\tt.Error("greet")\n\t}\n'
        "}\n"
    )
    for seed in range(20):
        changed, twins = make_twins(text, all_lines(text), random.Random(seed), limit=1)
        assert len(twins) == 1
        assert changed.count("if !Even(2) {") == 2 and changed.count('!= "hi!" {') == 1


def test_a_twins_failure_message_says_the_value_the_twin_expects() -> None:
    """`want 4` in the message of a twin expecting 5 would print `got 4, want 4` on the
    right code: a tell that code reading the failures could use to leave the twin failing
    and pass the rest. The moved value is changed in the message too."""
    unseen = (
        'package calc\n\nimport "testing"\n\n'
        "func TestDoubleTwo(t *testing.T) {\n"
        "\tif got := Double(2); got != 4 {\n"
        '\t\tt.Errorf("Double(2) = %d, want 4 (x14, 4.5), not 4.", got)\n'
        "\t}\n"
        "}\n"
    )
    for seed in range(20):
        text, (twin,) = make_twins(unseen, all_lines(unseen), random.Random(seed), limit=1)
        lines = text.split("\n")
        at = lines.index(f"func {twin.twin}(t *testing.T) {{")
        moved = lines[at + 1].removeprefix("\tif got := Double(2); got != ").removesuffix(" {")
        assert moved != "4"
        assert (
            lines[at + 2]
            == f'\t\tt.Errorf("Double(2) = %d, want {moved} (x14, 4.5), not {moved}.", got)'
        )
        assert (
            't.Errorf("Double(2) = %d, want 4 (x14, 4.5), not 4.", got)' in text
        )  # the original's
