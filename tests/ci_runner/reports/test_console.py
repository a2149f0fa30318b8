"""Test results from console output when a wrapped runner leaves no report file."""

from __future__ import annotations

import time

import pytest

from ci_runner import CIRequest, CIRunner, CIStatus, Pipeline, TestOutcome
from ci_runner.languages.outcomes import bounded_id
from ci_runner.reports.console import MAX_LINE, parse_console
from tests.ci_runner.projects import CPP, GO, PYTHON
from tests.conftest import MakeRepo

P, F, E, S = TestOutcome.PASSED, TestOutcome.FAILED, TestOutcome.ERROR, TestOutcome.SKIPPED

PYTEST_LOG = """\
============================= test session starts ==============================
tests/test_a.py::test_x PASSED
FAILED tests/test_a.py::not_in_the_summary - ignored
=========================== short test summary info ============================
PASSED tests/test_a.py::test_x
PASSED tests/test_a.py::TestK::test_m[1-2]
FAILED tests/sub/test_b.py::test_y - assert 1 == 2
ERROR tests/test_c.py::test_z - fixture 'q' not found
XFAIL tests/test_c.py::test_known - bug 12
SKIPPED [1] tests/test_a.py:9: no network
==================== 1 failed, 2 passed, 1 error in 0.12s =====================
"""
GO_LOG = """\
=== RUN   TestAdd
--- PASS: TestAdd (0.00s)
=== RUN   TestSub
=== RUN   TestSub/neg
    --- FAIL: TestSub/neg (0.00s)
--- FAIL: TestSub (0.00s)
FAIL
FAIL\texample.com/calc\t0.004s
--- SKIP: TestSlow (0.00s)
ok  \texample.com/other\t0.002s
FAIL\texample.com/broken [build failed]
"""
CARGO_LOG = """\
     Running unittests src/lib.rs (target/debug/deps/calc-1)
test tests::adds ... ok
test tests::subs ... FAILED
        PASS [   0.004s] calc tests::negates
        FAIL [   0.010s] calc tests::divides
     SIGSEGV [   0.010s] calc tests::crashes
"""
CTEST_LOG = """\
1/2 Test #1: unit_a ...........................   Passed    0.01 sec
2/2 Test #2: unit_b ...........................***Failed    0.02 sec
"""

# `python -m unittest -v` as Python 3.11 prints it (imap-codec's `just bindings` runs it),
# and a few lines as Python 3.10 did (the class, not the test, in the parentheses)
UNITTEST_LOG = """\
setUpClass (pkg.test_m.Broken) ... ERROR
test_doc (pkg.test_m.Calc.test_doc)
Adds numbers. ... ok
test_error (pkg.test_m.Calc.test_error) ... ERROR
test_fail (pkg.test_m.Calc.test_fail) ... FAIL
test_noisy (pkg.test_m.Calc.test_noisy) ... hello from the test
ok
test_skip (pkg.test_m.Calc.test_skip) ... skipped 'no network'
test_sub (pkg.test_m.Calc.test_sub) ...
  test_sub (pkg.test_m.Calc.test_sub) (i=2) ... FAIL
test_xfail (pkg.test_m.Calc.test_xfail) ... expected failure
test_xpass (pkg.test_m.Calc.test_xpass) ... unexpected success
test_old (tests.test_codec.Codec) ... ok
test_old_doc (tests.test_codec.Codec)
Decodes a greeting. ... FAIL

======================================================================
ERROR: setUpClass (pkg.test_m.Broken)
----------------------------------------------------------------------
Traceback (most recent call last):
RuntimeError: db
----------------------------------------------------------------------
Ran 11 tests in 0.003s

FAILED (failures=3, errors=2, skipped=1, expected failures=1, unexpected successes=1)
"""


def test_unittest_verbose_lines_give_dotted_ids() -> None:
    assert parse_console(UNITTEST_LOG) == {
        "pkg.test_m.Broken.setUpClass": E,
        "pkg.test_m.Calc.test_doc": P,  # its docstring's first line came before the verdict
        "pkg.test_m.Calc.test_error": E,
        "pkg.test_m.Calc.test_fail": F,
        "pkg.test_m.Calc.test_noisy": P,  # the test printed before its verdict
        "pkg.test_m.Calc.test_skip": S,
        "pkg.test_m.Calc.test_sub": F,  # a failing subtest fails its test
        "pkg.test_m.Calc.test_xfail": S,
        "pkg.test_m.Calc.test_xpass": F,  # an unexpected success fails the run
        "tests.test_codec.Codec.test_old": P,
        "tests.test_codec.Codec.test_old_doc": F,
    }


def test_pytest_summary_lines_give_junit_shaped_ids() -> None:
    assert parse_console(PYTEST_LOG) == {
        "tests.test_a::test_x": P,
        "tests.test_a.TestK::test_m[1-2]": P,
        "tests.sub.test_b::test_y": F,
        "tests.test_c::test_z": E,
        "tests.test_c::test_known": S,
    }


def test_go_verbose_lines_take_their_package_from_the_line_after() -> None:
    assert parse_console(GO_LOG) == {
        "example.com/calc::TestAdd": P,
        "example.com/calc::TestSub/neg": F,
        "example.com/calc::TestSub": F,
        "example.com/other::TestSlow": S,
        "example.com/broken::(package)": E,
    }


def test_cargo_nextest_and_ctest_lines() -> None:
    assert parse_console(CARGO_LOG) == {
        "src/lib.rs::tests::adds": P,
        "src/lib.rs::tests::subs": F,
        "calc::tests::negates": P,
        "calc::tests::divides": F,
        "calc::tests::crashes": E,
    }
    assert parse_console(CTEST_LOG) == {"unit_a": P, "unit_b": F}


def test_hostile_logs_parse_in_linear_time() -> None:
    lines = [
        "=" * 50_000,
        "PASSED " + "a" * 100_000 + ".py::t",
        "--- PASS: " + "T" * 100_000,
        "ok " + "x" * 100_000,
        "    PASS [" + " " * 100_000,
        "make " + "-x " * 30_000,
        "test_x (" + "a." * 50_000 + ") ... ok",
        "t" * 250 + " (" + "a" * 900 + ")" + " ... " * 20_000,
    ]
    text = "\n".join(lines * 5)
    started = time.monotonic()
    parse_console(text)
    assert time.monotonic() - started < 2.0
    long_id = "tests/test_a.py::" + "t" * (MAX_LINE * 2)
    assert parse_console(f"=== short test summary info ===\nPASSED {long_id}\n") == {
        bounded_id("tests.test_a::" + "t" * (MAX_LINE - len("PASSED tests/test_a.py::"))): P
    }


@pytest.mark.usefixtures("no_containers_left")
@pytest.mark.parametrize(
    ("project", "run", "report"),
    [
        # tox-like wrapper: the report file never appears
        (PYTHON, "python3 -m pytest -p no:cacheprovider -rap", {"path": "never-written.xml"}),
        # a script around `go test -v`: no -json events in the step log
        (GO, "printf 'go test -v ./...\\n' > t.sh && sh t.sh", {"step": "test"}),
        # a script around a plain `go test`: the -v a derived pipeline puts in GOFLAGS
        (GO, "printf 'go test ./...\\n' > t.sh && GOFLAGS=-v sh t.sh", {"step": "test"}),
        # the job's own --junitxml wins over the one added through PYTEST_ADDOPTS: the file
        # pytest says it wrote is read (no short summary here lists the passes)
        (
            PYTHON,
            "python3 -m pytest -q -p no:cacheprovider --junitxml=reports/own.xml",
            {"path": "arena-report.xml"},
        ),
        # a ctest older than 3.21 writes no --output-junit file: its console lines are read
        (
            CPP,
            "cmake -S . -B build >/dev/null && cmake --build build >/dev/null && cd build && ctest",
            {"path": "arena-ctest.xml"},
        ),
    ],
    ids=["pytest", "go", "go-goflags", "pytest-own-junit", "ctest"],
)
def test_runs_without_a_readable_report_fall_back_to_the_step_logs(
    project: object,
    run: str,
    report: dict[str, str],
    images: dict[str, str],
    runner: CIRunner,
    make_repo: MakeRepo,
) -> None:
    from tests.ci_runner.projects import Project

    assert isinstance(project, Project)
    fmt = {"python": "junit", "go": "go-json", "cpp": "ctest"}[project.language]
    pipeline = Pipeline.model_validate(
        {"steps": [{"name": "test", "run": run}], "report": {"format": fmt, **report}}
    )
    repo, commit = make_repo(project.files)
    request = CIRequest(repo=repo, commit=commit, pipeline=pipeline, image=images[project.language])
    broken = runner.run(request)
    assert broken.status is CIStatus.FAILED and "report" not in (broken.error or "")
    assert broken.tests == {project.test_add: F, project.test_other: P}
    fixed = runner.run(request.model_copy(update={"diffs": (project.fix,)}))
    assert fixed.status is CIStatus.PASSED
    assert fixed.tests == {project.test_add: P, project.test_other: P}
