"""Where a derived pipeline's test results are read from: report options the tools see."""

from __future__ import annotations

import json
import time

import pytest

from ci_runner.pipeline import ReportFormat, Step
from ci_runner.workflows import derive_pipeline
from ci_runner.workflows.reporting import report_for

JUNIT = "--output-junit /workspace/arena-ctest.xml"


def _cpp(*runs: str, setup: str = "") -> str:
    steps = "".join(f"      - run: {json.dumps(run)}\n" for run in runs)
    install = f"      - run: {json.dumps(setup)}\n" if setup else ""
    return f"jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n{install}{steps}"


@pytest.mark.parametrize(
    ("run", "expected"),
    [
        ("cd build && ctest --output-on-failure", f"cd build && ctest {JUNIT} --output-on-failure"),
        ("ctest --test-dir build -j4", f"ctest {JUNIT} --test-dir build -j4"),
        (
            "CTEST_OUTPUT_ON_FAILURE=1 /usr/bin/ctest",
            f"CTEST_OUTPUT_ON_FAILURE=1 /usr/bin/ctest {JUNIT}",
        ),
        ("ctest -N && ctest --preset ci", f"ctest -N && ctest {JUNIT} --preset ci"),
        ("echo running ctest\nctest", f"echo running ctest\nctest {JUNIT}"),
        (  # every test runs to its end, in a line of its own or chained
            "cd build && ctest --stop-on-failure -j2 && ctest -N --stop-on-failure",
            f"cd build && ctest {JUNIT} -j2 && ctest -N",
        ),
    ],
)
def test_a_visible_ctest_writes_junit_that_is_the_report(run: str, expected: str) -> None:
    derived = derive_pipeline({"w.yml": _cpp("cmake -B build", run)}, ["test"], "cpp")
    build, tests = derived.pipeline.steps
    assert build.run == "cmake -B build" and tests.run == expected
    report = derived.pipeline.report
    assert report.format is ReportFormat.CTEST and report.path == "arena-ctest.xml"
    assert any("ctest writes JUnit to arena-ctest.xml" in note for note in derived.notes)
    dropped = any("--stop-on-failure dropped" in note for note in derived.notes)
    assert dropped == ("--stop-on-failure" in run)


@pytest.mark.parametrize(
    ("runs", "setup", "why"),
    [
        (("./build.sh --test",), "", None),  # hidden in a script
        (("ctest -L unit", "ctest -L integration"), "", "ctest runs more than once"),
        (("for d in a b; do ctest --test-dir $d; done",), "", "ctest runs more than once"),
        (("ctest --output-junit out.xml",), "", None),  # the job's own JUnit file
        (("ctest -S dashboard.cmake",), "", None),
        (("ctest",), "pip install cmake==3.18.4", "pins cmake 3.18, older than 3.21"),
    ],
)
def test_otherwise_the_ctest_lines_of_the_test_step_are_read(
    runs: tuple[str, ...], setup: str, why: str | None
) -> None:
    scripts = {"build.sh": "cmake -B b && cmake --build b && cd b && ctest\n"}
    derived = derive_pipeline(
        {"w.yml": _cpp("cmake -B b", *runs, setup=setup)}, ["test"], "cpp", read_file=scripts.get
    )
    assert [s.run for s in derived.pipeline.steps] == ["cmake -B b", *runs]
    report = derived.pipeline.report
    assert report.format is ReportFormat.CTEST and report.path is None
    assert report.step == derived.pipeline.steps[-1].name
    if why is not None:
        assert any(why in note for note in derived.notes)


def _go(run: str, env: str = "", step_env: str = "") -> str:
    return (
        f"jobs:\n  test:\n    runs-on: ubuntu-latest\n{env}    steps:\n"
        f"      - run: {json.dumps(run)}\n{step_env}"
    )


def test_a_go_test_behind_make_prints_its_test_lines_through_goflags() -> None:
    makefile = {"Makefile": "test:\n\tgo test -race ./...\n"}
    derived = derive_pipeline({"w.yml": _go("make test")}, ["test"], "go", read_file=makefile.get)
    pipeline = derived.pipeline
    assert pipeline.steps[0].run == "make test" and pipeline.env["GOFLAGS"] == "-v"
    assert pipeline.report.format is ReportFormat.GO_JSON and pipeline.report.step == "step-1"
    assert any("GOFLAGS gets -v" in note for note in derived.notes)
    # the job's own GOFLAGS are kept, -v after them; so are a step's
    job_env = "    env: {GOFLAGS: -mod=vendor}\n"
    step_env = "        env: {GOFLAGS: -tags=integration}\n"
    own = derive_pipeline(
        {"w.yml": _go("make test", job_env, step_env)}, ["test"], "go", read_file=makefile.get
    ).pipeline
    assert own.env["GOFLAGS"] == "-mod=vendor -v"
    assert own.steps[0].env["GOFLAGS"] == "-tags=integration -v"


def test_a_visible_go_test_gets_json_and_no_goflags() -> None:
    pipeline = derive_pipeline({"w.yml": _go("go test ./...")}, ["test"], "go").pipeline
    assert pipeline.steps[0].run == "go test -json ./..." and "GOFLAGS" not in pipeline.env


def test_python_keeps_junit_through_pytest_addopts() -> None:
    workflow = _go("python -m unittest -v", "    env: {PYTEST_ADDOPTS: -x}\n")
    pipeline = derive_pipeline({"w.yml": workflow}, ["test"], "python").pipeline
    assert pipeline.env["PYTEST_ADDOPTS"] == "-x -rap --junitxml=/workspace/arena-report.xml"
    assert pipeline.report.path == "arena-report.xml"  # unittest: its -v lines are read instead


def test_hostile_scripts_are_scanned_in_linear_time() -> None:
    runs = [
        ";a=b " * 20_000 + "ctest",
        "a=b " * 20_000 + "x",
        "/" * 50_000 + "ctest",
        "do " * 30_000 + "ctest " + "-j " * 30_000,
    ]
    started = time.monotonic()
    for run in runs:
        report_for("cpp", [Step(name="t", run=run)], {"t": "ctest"}, [])
    assert time.monotonic() - started < 2.0


def test_the_tox_override_uses_the_projects_own_spelling_of_pass_env() -> None:
    """tox 4 lets an override under `pass_env` shadow a tox.ini's `passenv` list: the job's
    PGHOST would no longer reach the tests (seen on django-timeline-logger)."""
    from ci_runner.languages.python import tox_pass_env_key

    legacy = {"pkg/tox.ini": "[testenv]\npassenv =\n    PGHOST\n"}
    assert tox_pass_env_key(legacy.get, "pkg") == "passenv"
    assert tox_pass_env_key(legacy.get, ".") == "pass_env"
    modern = {"setup.cfg": "[testenv]\npass_env = PGHOST\n"}
    assert tox_pass_env_key(modern.get, ".") == "pass_env"
    workflow = """
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: pip install tox
      - run: tox -e py311
"""
    files = {"tox.ini": "[testenv]\npassenv = PG*\ncommands = pytest\n"}
    derived = derive_pipeline({"w.yml": workflow}, ["test"], "python", read_file=files.get)
    assert derived.pipeline.env["TOX_OVERRIDE"] == "testenv.passenv+=PYTEST_ADDOPTS"
