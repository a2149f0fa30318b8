"""Pipelines derived from GitHub Actions jobs."""

import pytest

from ci_runner.pipeline import ReportFormat
from ci_runner.workflows import JobRef, Refusal, WorkflowError, derive_pipeline

GO_WORKFLOW = """
env: {GLOBAL: g}
jobs:
  build:
    defaults: {run: {working-directory: src}}
    env: {JOB: j}
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-go@v5
      - uses: golangci/golangci-lint-action@v6
      - run: go vet ./...
      - name: test
        run: go test -race ./...
        env: {STEP: s}
        timeout-minutes: 2
        continue-on-error: true
"""


def test_go_job_becomes_steps_with_env_workdir_and_a_json_report() -> None:
    derived = derive_pipeline({".github/workflows/ci.yml": GO_WORKFLOW}, ["build"], "go")
    vet, test = derived.pipeline.steps
    assert vet.run == "go vet ./..." and vet.workdir == "src"
    assert test.run == "go test -json -race ./..." and test.env == {"STEP": "s"}
    assert test.timeout_s == 120 and test.continue_on_error
    assert derived.pipeline.env["GLOBAL"] == "g" and derived.pipeline.env["JOB"] == "j"
    assert (
        derived.pipeline.report.format is ReportFormat.GO_JSON
        and derived.pipeline.report.step == "test"
    )
    assert derived.skipped_actions == ("golangci/golangci-lint-action@v6",)


def test_rust_and_cpp_read_the_log_of_their_test_step() -> None:
    rust = "jobs:\n  ci:\n    steps:\n      - run: cargo build\n      - run: cargo test --all\n"
    derived = derive_pipeline({"w.yml": rust}, ["ci"], "rust")
    assert derived.pipeline.report.format is ReportFormat.LIBTEST
    assert derived.pipeline.report.step == "step-2"
    cpp = "jobs:\n  ci:\n    steps:\n      - run: cmake -B b && cmake --build b\n      - run: cd b && ctest\n"
    assert (
        derive_pipeline({"w.yml": cpp}, ["ci"], "cpp").pipeline.report.format is ReportFormat.CTEST
    )


@pytest.mark.parametrize(
    ("workflows", "jobs", "message"),
    [
        ({"w.yml": "jobs: {a: {steps: [{run: make}]}}"}, ["b"], "'b': no job leg has this name"),
        ({"w.yml": "jobs: {a: {steps: [{uses: x/y@v1}]}}"}, ["a"], "no run: step is left"),
        ({"w.yml": "jobs: [unclosed"}, ["a"], "not valid YAML"),
        (
            {"w.yml": "jobs: {a: {steps: [{run: ruff check .}]}}"},
            ["a"],
            "a lint leg, not a test job",
        ),
    ],
)
def test_unusable_jobs_are_explained(
    workflows: dict[str, str], jobs: list[str], message: str
) -> None:
    with pytest.raises(WorkflowError, match=message):
        derive_pipeline(workflows, jobs, "rust")


MATRIX_WORKFLOW = """
name: tests
on:
  pull_request:
env:
  INTEG_TESTS: yes
  FLAGS: -DFOO=ON
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: ruff check .
  tests:
    name: ${{ matrix.os }} (${{ matrix.python-version }})
    runs-on: ${{ matrix.os }}
    if: github.event_name == 'pull_request' || github.event_name == 'push'
    strategy:
      matrix:
        os: [windows-latest, ubuntu-latest, macos-latest]
        python-version: ["3.11", "3.12"]
        exclude:
          - os: macos-latest
            python-version: "3.11"
    env:
      PY: py${{ matrix.python-version }}
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with: {python-version: "${{ matrix.python-version }}"}
      - name: System deps
        if: runner.os == 'Linux'
        run: |
          sudo apt-get update
          sudo apt-get install -y libxml2-dev
      - name: Windows deps
        if: runner.os == 'Windows'
        run: choco install foo
      - name: Python deps
        run: python -m pip install --upgrade pip tox
      - name: Tests
        run: tox -e ${{ env.PY }} -- --integ=${{ env.INTEG_TESTS }} ${{ env.FLAGS }}
        working-directory: ${{ github.workspace }}/src
      - name: Only on failure
        if: failure()
        run: cat log.txt
      - name: Release
        if: github.ref == 'refs/heads/main'
        run: ./release.sh
      - name: Upload coverage
        run: curl -s https://codecov.io/bash | bash
  nightly:
    runs-on: ubuntu-latest
    if: github.event_name == 'schedule'
    steps:
      - run: pytest
"""
PATH = ".github/workflows/tests.yml"


def test_a_display_name_finds_its_matrix_leg_and_its_steps() -> None:
    derived = derive_pipeline(
        {PATH: MATRIX_WORKFLOW},
        [JobRef("windows-latest (3.12)", PATH), JobRef("ubuntu-latest (3.12)", PATH)],
        "python",
    )
    assert derived.leg == "ubuntu-latest (3.12)" and derived.workflow_file == PATH
    pipeline = derived.pipeline
    assert [s.name for s in pipeline.setup] == ["System deps", "Python deps"]
    assert pipeline.setup[0].run == "apt-get update\napt-get install -y libxml2-dev"
    (tests,) = pipeline.steps
    assert tests.run == "tox -e py3.12 -- --integ=yes -DFOO=ON" and tests.workdir == "src"
    assert pipeline.env["INTEG_TESTS"] == "yes" and pipeline.env["PY"] == "py3.12"
    assert pipeline.env["TOX_OVERRIDE"] == "testenv.pass_env+=PYTEST_ADDOPTS"
    assert "--junitxml=/workspace/arena-report.xml" in pipeline.env["PYTEST_ADDOPTS"]
    assert pipeline.report.path == "arena-report.xml"
    notes = "\n".join(derived.notes)
    for expected in (
        "leg 'windows-latest (3.12)' (.github/workflows/tests.yml job tests): dropped: runs on "
        "windows-latest, not Linux",
        "leg 'ubuntu-latest (3.12)' (.github/workflows/tests.yml job tests): kept: Linux",
        "step 'Windows deps' skipped: its if: (runner.os == 'Windows') is false",
        "step 'Only on failure' skipped",
        "step 'Release' skipped: its if: (github.ref == 'refs/heads/main') is false",
        "step 'Upload coverage' dropped: it runs after the last test step",
        "(sudo dropped: setup runs as root)",
        "uses actions/setup-python@v5 with python-version=3.12: provided by the image",
    ):
        assert expected in notes


def test_job_names_select_every_leg_and_linux_legs_that_test_are_preferred() -> None:
    derived = derive_pipeline({PATH: MATRIX_WORKFLOW}, ["lint", "nightly", "tests"], "python")
    assert derived.leg == "ubuntu-latest (3.12)"  # the newest Python of the test legs
    notes = "\n".join(derived.notes)
    assert "job lint): kept: Linux (ubuntu-latest), rank 3: a lint leg, not a test job" in notes
    # a listed job ran on the pull request: its own if: does not drop it
    assert (
        "job nightly): the job's if: (github.event_name == 'schedule') reads false here; "
        "the job is listed, so it ran on the pull request: kept" in notes
    )
    assert (
        "job nightly): kept: Linux (ubuntu-latest), rank 2: runs tests (pytest); a nightly leg"
        in notes
    )
    assert "'macos-latest (3.12)'" in notes and "'macos-latest (3.11)'" not in notes  # excluded


def test_default_leg_names_list_the_matrix_values() -> None:
    workflow = """
jobs:
  ci:
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-latest]
        compiler: [gcc, clang]
        include: [{compiler: clang, version: 14}]
    steps: [{run: "cmake -B b && cmake --build b && cd b && ctest"}]
  sanitizers:
    name: Sanitizers
    runs-on: ubuntu-22.04
    strategy: {matrix: {kind: [address]}}
    steps: [{run: "ctest -L ${{ matrix.kind }}"}]
"""
    derived = derive_pipeline(
        {"main.yml": workflow}, [JobRef("ci (ubuntu-latest, clang, 14)", "main.yml")], "cpp"
    )
    assert derived.leg == "ci (ubuntu-latest, clang, 14)"
    assert derived.pipeline.report.format is ReportFormat.CTEST
    sanitizers = derive_pipeline({"main.yml": workflow}, ["Sanitizers (address)"], "cpp")
    assert sanitizers.pipeline.steps[0].run == "ctest -L address"


def test_a_script_that_runs_tests_counts_and_local_installs_run_in_ci_too() -> None:
    workflow = """
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: pip install -r requirements.txt && pip install .
      - run: ./ci/run-tests.sh --fast
"""
    scripts = {"ci/run-tests.sh": '#!/bin/sh\npython -m pytest -q "$@"\n'}
    derived = derive_pipeline({"w.yml": workflow}, ["test"], "python", read_file=scripts.get)
    pipeline = derived.pipeline
    assert [s.run for s in pipeline.setup] == ["pip install -r requirements.txt && pip install ."]
    assert [s.run for s in pipeline.steps] == [
        "pip install -r requirements.txt && pip install .",
        "./ci/run-tests.sh --fast",
    ]
    assert any("runs tests (pytest (in ci/run-tests.sh))" in n for n in derived.notes)
    # the script is not readable: the job's own step is still its CI step, ranked as unknown
    unread = derive_pipeline({"w.yml": workflow}, ["test"], "python")
    assert [s.run for s in unread.pipeline.steps][-1] == "./ci/run-tests.sh --fast"
    assert any("runs commands not recognised as tests" in n for n in unread.notes)


def test_nothing_unresolved_reaches_a_command_line() -> None:
    workflow = """
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: echo ${{ needs.setup.outputs.version }}
      - run: go test ./... -run ${{ matrix.missing }}
      - run: go test -tags '${{ hashFiles('go.sum') }}' ./...
"""
    derived = derive_pipeline({"w.yml": workflow}, ["test"], "go")
    assert [s.run for s in derived.pipeline.steps] == ["go test -json ./... -run"]
    notes = "\n".join(derived.notes)
    assert "dropped: the needs context is not known" in notes
    assert "dropped: the function hashfiles()" in notes


def test_no_usable_leg_is_explained() -> None:
    windows = "jobs: {win: {runs-on: windows-latest, steps: [{run: pytest}]}}"
    with pytest.raises(WorkflowError, match=r"'win'.*windows-latest, not Linux") as raised:
        derive_pipeline({PATH: windows}, [JobRef("win", PATH)], "python")
    assert raised.value.reason == "Windows or macOS only"
    with pytest.raises(WorkflowError, match="no such workflow file"):
        derive_pipeline({PATH: MATRIX_WORKFLOW}, [JobRef("tests", "other.yml")], "python")


def test_leading_installs_of_a_mixed_step_become_setup() -> None:
    workflow = """
defaults:
  run: {working-directory: pkg}
jobs:
  test:
    runs-on: ubuntu-latest
    services:
      postgres: {image: postgres}
    steps:
      - name: Test
        run: |
          cd lib && sudo apt-get install -y libpq-dev
          pip install -r requirements.txt
          python -m pytest -q \\
            -x
      - name: Windows only
        shell: pwsh
        run: Get-ChildItem
"""
    derived = derive_pipeline({"w.yml": workflow}, ["test"], "python")
    (setup,) = derived.pipeline.setup
    assert setup.name == "Test (installs)" and setup.workdir == "pkg"
    assert setup.run == "cd lib && apt-get install -y libpq-dev\npip install -r requirements.txt"
    (test,) = derived.pipeline.steps
    assert test.run == "cd lib\npython -m pytest -q \\\n  -x"
    notes = "\n".join(derived.notes)
    assert "step 'Windows only' dropped: runs in shell 'pwsh', not bash" in notes
    assert "the job's services (postgres) are provided by the environment, if any" in notes


def test_the_toolchain_version_the_job_asks_for_is_kept() -> None:
    derived = derive_pipeline(
        {PATH: MATRIX_WORKFLOW}, [JobRef("ubuntu-latest (3.12)", PATH)], "python"
    )
    assert derived.toolchain_request == "3.12"  # setup-python's input, from the matrix
    matrix_only = """
jobs:
  test:
    runs-on: ubuntu-latest
    strategy: {matrix: {go: ['1.22']}}
    steps:
      - run: go test ./...
"""
    assert derive_pipeline({"w.yml": matrix_only}, ["test"], "go").toolchain_request == "1.22"
    pinned_rust = """
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: dtolnay/rust-toolchain@1.70
      - run: cargo test
"""
    assert derive_pipeline({"w.yml": pinned_rust}, ["test"], "rust").toolchain_request == "1.70"
    assert derive_pipeline({"w.yml": GO_WORKFLOW}, ["build"], "go").toolchain_request is None


CONDA_WORKFLOW = """
jobs:
  test:
    name: test (${{ matrix.python-version }}, ${{ matrix.environment }})
    runs-on: ubuntu-latest
    defaults: {run: {shell: "bash -el {0}"}}
    strategy:
      matrix:
        python-version: ["3.12"]
        environment: [ci/environment.yml]
    steps:
      - uses: actions/checkout@v4
      - uses: conda-incubator/setup-miniconda@v3
        with: {environment-file: "${{ matrix.environment }}", python-version: "3.12"}
      - run: python -m pytest tests
  mamba:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: micromamba create -y -n t -f env.yml && micromamba run -n t pytest
  windows-conda:
    runs-on: windows-latest
    steps:
      - uses: mamba-org/setup-micromamba@v1
      - run: pytest
  pip:
    runs-on: ubuntu-latest
    steps:
      - uses: conda-incubator/setup-miniconda@v3
        if: runner.os == 'macOS'
      - run: pip install -e . && pytest
"""


@pytest.mark.parametrize("entry", ["test (3.12, ci/environment.yml)", "mamba"])
def test_a_conda_job_is_refused_with_its_reason(entry: str) -> None:
    from ci_runner.workflows import UnsupportedJob

    with pytest.raises(UnsupportedJob, match="needs conda, which Arena does not support") as raised:
        derive_pipeline({".github/workflows/ci.yml": CONDA_WORKFLOW}, [entry], "python")
    assert raised.value.reason == Refusal.CONDA == "needs conda"
    needs = "uses conda-incubator/setup-miniconda@v3" if entry != "mamba" else "runs conda"
    assert needs in str(raised.value)


def test_a_conda_leg_gives_way_to_a_usable_one_and_a_skipped_conda_step_is_harmless() -> None:
    workflows = {".github/workflows/ci.yml": CONDA_WORKFLOW}
    derived = derive_pipeline(workflows, ["windows-conda", "mamba", "pip"], "python")
    assert derived.leg == "pip"
    notes = "\n".join(derived.notes)
    assert "'mamba' (.github/workflows/ci.yml job mamba): dropped: needs conda" in notes
    assert "runs on windows-latest, not Linux" in notes
    assert [s.run for s in derived.pipeline.steps] == ["pip install -e . && pytest"]
    # a Windows-only conda job is not a conda refusal: it is just not Linux
    windows_conda = "jobs: {wc: {runs-on: windows-latest, steps: [{uses: mamba-org/setup-micromamba@v1}, {run: pytest}]}}"
    with pytest.raises(WorkflowError) as raised:
        derive_pipeline({"w.yml": windows_conda}, ["wc"], "python")
    assert "not Linux" in str(raised.value) and raised.value.reason == "Windows or macOS only"
