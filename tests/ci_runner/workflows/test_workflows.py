"""Pipelines derived from GitHub Actions jobs."""

import pytest

from ci_runner.pipeline import ReportFormat
from ci_runner.workflows import JobRef, Refusal, WorkflowError, derive_pipeline, derive_pipelines

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
    # every test binary runs: a failing one hides none after it, and a tripwire may fail
    assert derived.pipeline.steps[-1].run == "cargo test --no-fail-fast --all"
    assert any("--no-fail-fast" in note for note in derived.notes)
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
        "leg 'ubuntu-latest (3.12)' (.github/workflows/tests.yml job tests) (rank 0): kept: Linux",
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
    assert "job lint) (rank 3): kept: Linux (ubuntu-latest): a lint leg, not a test job" in notes
    # a listed job ran on the pull request: its own if: does not drop it
    assert (
        "job nightly): the job's if: (github.event_name == 'schedule') reads false here; "
        "the job is listed, so it ran on the pull request: kept" in notes
    )
    assert (
        "job nightly) (rank 2): kept: Linux (ubuntu-latest): runs tests (pytest); a nightly leg"
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
    assert sanitizers.pipeline.steps[0].run == (
        "ctest --output-junit /workspace/arena-ctest.xml -L address"
    )


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
    assert "dropped: needs.setup is not known" in notes
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
    assert "the job's services (postgres) run beside the job, as localhost" in notes


# swig's CI (its linux.yml at the base of swig__swig-3159, shortened): a step sources a
# repository script, which sources another that installs with apt-get and pip
SOURCING_WORKFLOW = """
jobs:
  build:
    runs-on: ubuntu-22.04
    steps:
    - uses: actions/checkout@v4
    - name: Install Dependencies
      run: |
          set -x
          export PATH="/usr/lib/ccache:$PATH"
          source $GITHUB_WORKSPACE/Tools/GHA-linux-install.sh
          echo WITHLANG="$WITHLANG" >> $GITHUB_ENV
          case $(uname) in
              Linux) cpu_count=$(nproc) ;;
          esac
          echo SWIGJOBS=-j$cpu_count >> $GITHUB_ENV
    - name: Configure
      run: |
          source $GITHUB_WORKSPACE/Tools/CI-linux-environment.sh
          ./autogen.sh && mkdir -p build/build && cd build/build && ../../configure
    - name: Test
      working-directory: build/build
      run: make check-python-test-suite
"""
SOURCED_SCRIPTS = {
    "Tools/GHA-linux-install.sh": 'script_dir="$( dirname "${BASH_SOURCE[0]}")"\nRETRY=\n'
    'source "$script_dir"/CI-linux-install.sh\n',
    "Tools/CI-linux-install.sh": "set -e\n$RETRY sudo apt-get -qq update\n"
    "$RETRY sudo apt-get -qq install libboost-dev libpcre3-dev\n"
    'case "$SWIGLANG" in\n  "python") pip install --user pycodestyle ;;\nesac\n',
    "Tools/CI-linux-environment.sh": 'export PATH="$HOME/.local/bin:$PATH"\n',
    "configure.ac": "AC_INIT([swig])\n",
}


def test_a_step_sourcing_a_repository_script_that_installs_is_setup_up_to_it() -> None:
    """GitHub's runner lets a step source the repo's install script: its installs need the
    network, so they are setup; a script that only sets variables, or one that runs tests,
    stays in CI runs."""
    derived = derive_pipeline(
        {"w.yml": SOURCING_WORKFLOW}, ["build"], "cpp", read_file=SOURCED_SCRIPTS.get
    )
    (setup,) = derived.pipeline.setup
    assert setup.name == "Install Dependencies (installs)"
    assert "source $GITHUB_WORKSPACE/Tools/GHA-linux-install.sh" in setup.run
    assert "case $(uname)" not in setup.run
    first, configure, _ = derived.pipeline.steps
    assert first.run.startswith("set -x\nexport PATH=") and "case $(uname)" in first.run
    assert "source" not in first.run  # installed once, in the environment
    assert configure.run.startswith("source $GITHUB_WORKSPACE/Tools/CI-linux-environment.sh")
    testing = {
        **SOURCED_SCRIPTS,
        "Tools/CI-linux-install.sh": "apt-get install -y g++\nmake check\n",
    }
    derived = derive_pipeline({"w.yml": SOURCING_WORKFLOW}, ["build"], "cpp", read_file=testing.get)
    assert not derived.pipeline.setup  # its script runs tests too: a CI step as it is


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


COMPOSITE_CALLER = """
jobs:
  test:
    runs-on: ubuntu-latest
    defaults: {run: {working-directory: pkg}}
    steps:
      - name: Prepare
        uses: ./.github/actions/prepare
        with: {extras: "dev,test"}
        env: {FROM_CALLER: c}
      - run: pytest -q
"""
PREPARE_ACTION = """
name: prepare
inputs:
  extras: {required: true}
  flags: {default: "--pre"}
  python: {default: "3.12"}
runs:
  using: composite
  steps:
    - run: pip install ${{ inputs.flags }} -e ".[${{ inputs.extras }}]"
      shell: bash
    - uses: ./.github/actions/inner
      with: {what: "py${{ inputs.python }}"}
    - name: Windows only
      run: Write-Host hi
      shell: pwsh
"""
INNER_ACTION = """
inputs: {what: {default: x}, level: {default: "2"}}
runs:
  using: composite
  steps:
    - name: Marker
      run: echo ${{ inputs.what }} ${{ inputs.level }} > marker
      shell: bash
"""
ACTIONS = {
    ".github/actions/prepare/action.yml": PREPARE_ACTION,
    ".github/actions/inner/action.yaml": INNER_ACTION,
}


def test_a_composite_action_runs_its_steps_with_its_defaults_and_the_callers_inputs() -> None:
    derived = derive_pipeline(
        {"w.yml": COMPOSITE_CALLER}, ["test"], "python", read_file=ACTIONS.get
    )
    (install,) = derived.pipeline.setup
    assert install.name == "Prepare: step-1"
    assert install.run == 'pip install --pre -e ".[dev,test]"'  # default, then the caller's with:
    assert install.env == {"FROM_CALLER": "c"}  # the calling step's env reaches its steps
    assert install.workdir == "."  # the job's defaults do not reach an action's steps
    marker, tests = derived.pipeline.steps
    # a nested composite action: its own defaults, then what the outer action passed
    assert marker.name == "Prepare: ./.github/actions/inner: Marker"
    assert marker.run == "echo py3.12 2 > marker" and marker.workdir == "."
    assert tests.run == "pytest -q" and tests.workdir == "pkg"
    notes = "\n".join(derived.notes)
    assert "uses ./.github/actions/prepare: a composite action, its steps expanded" in notes
    assert "uses ./.github/actions/inner: a composite action, its steps expanded" in notes
    assert "step 'Prepare: Windows only' dropped: runs in shell 'pwsh', not bash" in notes


def test_a_local_action_that_is_not_composite_or_not_readable_is_skipped() -> None:
    node_action = {".github/actions/prepare/action.yml": "runs: {using: node20, main: x.js}"}
    derived = derive_pipeline(
        {"w.yml": COMPOSITE_CALLER}, ["test"], "python", read_file=node_action.get
    )
    assert derived.skipped_actions == ("./.github/actions/prepare",)
    assert "  uses ./.github/actions/prepare: skipped (not a composite action)" in derived.notes
    unread = derive_pipeline({"w.yml": COMPOSITE_CALLER}, ["test"], "python")
    assert any("skipped (not readable)" in note for note in unread.notes)
    assert [s.run for s in unread.pipeline.steps] == ["pytest -q"]


REUSING = """
name: CI
on: [pull_request, push]
jobs:
  unit:
    name: Unit
    uses: ./.github/workflows/tests.yml
    with: {python: "3.11", marker: "not slow"}
    secrets: inherit
"""
REUSABLE = """
on:
  workflow_call:
    inputs:
      python: {type: string, required: true}
      marker: {type: string, default: ""}
      coverage: {type: boolean, default: false}
    secrets:
      TOKEN: {required: false}
jobs:
  pytest:
    name: pytest (py${{ inputs.python }}, ${{ matrix.db }})
    runs-on: ubuntu-latest
    strategy: {matrix: {db: [sqlite, postgres]}}
    steps:
      - uses: actions/setup-python@v5
        with: {python-version: "${{ inputs.python }}"}
      - run: pytest -m "${{ inputs.marker }}" --db ${{ matrix.db }}
        env: {TOKEN: "${{ secrets.TOKEN }}", COVERAGE: "${{ inputs.coverage }}"}
"""
REUSING_FILES = {".github/workflows/ci.yml": REUSING, ".github/workflows/tests.yml": REUSABLE}


@pytest.mark.parametrize(
    "entry",
    [
        JobRef("Unit / pytest (py3.11, postgres)", ".github/workflows/ci.yml"),
        JobRef("pytest (py3.11, postgres)", ".github/workflows/ci.yml"),
        JobRef("pytest (py3.11, postgres)", ".github/workflows/tests.yml"),
        JobRef("pytest (py3.11, postgres)"),
    ],
    ids=str,
)
def test_a_reusable_workflow_gives_the_called_jobs_legs_with_the_callers_inputs(
    entry: JobRef,
) -> None:
    jobs = derive_pipelines(REUSING_FILES, [entry], "python")
    derived = jobs.best
    assert derived.leg == "pytest (py3.11, postgres)"  # the called job's display name
    assert derived.workflow_file == ".github/workflows/tests.yml"
    assert derived.toolchain_request == "3.11"
    (tests,) = derived.pipeline.steps
    assert tests.run == 'pytest -m "not slow" --db postgres'
    # secrets: inherit, but a fork's pull request has none; an input's declared default
    assert tests.env == {"TOKEN": "", "COVERAGE": "false"}
    assert any("called by Unit in .github/workflows/ci.yml" in note for note in derived.notes)
    # the other leg of the same called job is a candidate too
    assert [(r.leg, r.rank) for r in jobs.considered] == [
        ("pytest (py3.11, postgres)", 0),
        ("pytest (py3.11, sqlite)", 1),
    ]


def test_a_workflow_only_called_has_no_legs_of_its_own() -> None:
    jobs = derive_pipelines(REUSING_FILES, [JobRef("*")], "python")
    assert {(r.leg, r.workflow) for r in jobs.considered} == {
        ("pytest (py3.11, sqlite)", ".github/workflows/tests.yml"),
        ("pytest (py3.11, postgres)", ".github/workflows/tests.yml"),
    }
    assert all('-m "not slow"' in c.pipeline.steps[0].run for c in jobs.candidates)


PLATFORM_CALLER = """
on: [pull_request]
jobs:
  linux-test:
    uses: ./.github/workflows/segment-test.yml
    with: {target-platform: linux}
  mac-test:
    uses: ./.github/workflows/segment-test.yml
    with: {target-platform: macos}
"""
# the shape of a real segment workflow (electron's test segment): its matrix axis is an
# expression over the caller's inputs, evaluating to an array with fromJSON
PLATFORM_SEGMENT = """
on:
  workflow_call:
    inputs:
      target-platform: {type: string, required: true}
jobs:
  test:
    runs-on: ${{ inputs.target-platform == 'macos' && 'macos-14' || 'ubuntu-latest' }}
    strategy:
      matrix:
        build-type: ${{ inputs.target-platform == 'macos' && fromJSON('["darwin","mas"]') || fromJSON('["linux"]') }}
        shard: ${{ fromJSON('[1, 2]') }}
    steps:
      - run: ctest --test-dir build -I ${{ matrix.shard }},,2
"""


def test_a_matrix_axis_computed_from_the_callers_inputs_gives_its_legs() -> None:
    files = {
        ".github/workflows/build.yml": PLATFORM_CALLER,
        ".github/workflows/segment-test.yml": PLATFORM_SEGMENT,
    }
    jobs = derive_pipelines(files, [JobRef("test (linux, 2)", "build.yml")], "cpp")
    assert jobs.best.leg == "test (linux, 2)"
    assert "-I 2,,2" in jobs.best.pipeline.steps[0].run
    legs = {(r.leg, r.kept) for r in jobs.considered}
    assert ("test (linux, 1)", True) in legs
    assert not any("is not a list" in note for note in jobs.notes)


NESTED_MIDDLE = """
on:
  workflow_call:
    inputs:
      target-platform: {type: string, required: true}
jobs:
  build:
    runs-on: ubuntu-latest
    steps: [{run: make}]
  test:
    needs: build
    uses: ./.github/workflows/segment-test.yml
    with: {target-platform: "${{ inputs.target-platform }}"}
"""
NESTED_TOP = """
on: [pull_request]
jobs:
  linux-x64:
    uses: ./.github/workflows/build-and-test.yml
    with: {target-platform: linux}
"""


def test_reusable_workflows_calling_others_give_the_innermost_legs() -> None:
    files = {
        ".github/workflows/build.yml": NESTED_TOP,
        ".github/workflows/build-and-test.yml": NESTED_MIDDLE,
        ".github/workflows/segment-test.yml": PLATFORM_SEGMENT,
    }
    for entry in ("test (linux, 1)", "linux-x64 / test / test (linux, 1)"):
        jobs = derive_pipelines(files, [JobRef(entry, "build.yml")], "cpp")
        assert jobs.best.leg == "test (linux, 1)", entry
        assert "-I 1,,2" in jobs.best.pipeline.steps[0].run
    assert any("called by linux-x64 / test in .github/workflows/build.yml" in n for n in jobs.notes)
    # the outer caller's name names every leg under it
    everything = derive_pipelines(files, [JobRef("linux-x64", "build.yml")], "cpp")
    assert {r.leg for r in everything.considered} >= {"build", "test (linux, 1)", "test (linux, 2)"}


NEEDS_SETUP = """
on: [pull_request]
jobs:
  setup:
    runs-on: ubuntu-latest
    outputs: {src: "${{ steps.filter.outputs.src }}"}
    steps:
      - id: filter
        run: echo "src=true" >> "$GITHUB_OUTPUT"
  test:
    needs: [setup]
    if: needs.setup.outputs.src == 'true'
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: echo "setup was ${{ needs.setup.result }}" && pytest -q
      - run: pytest -k "${{ needs.setup.outputs.src }}"
"""


def test_a_job_needing_another_reads_its_result_as_success_and_its_outputs_as_null() -> None:
    jobs = derive_pipelines({"ci.yml": NEEDS_SETUP}, [JobRef("test")], "python")
    derived = jobs.best
    assert derived.leg == "test"
    # a step's command never holds a value made up: the step reading an output is dropped
    assert [s.run for s in derived.pipeline.steps] == ['echo "setup was success" && pytest -q']
    notes = "\n".join(derived.notes)
    assert "needs.setup.outputs.src not known before the run: read as null" in notes
    assert "dropped: needs.setup.outputs.src is not known" in notes
    assert not any("needs context is not known" in note for note in jobs.notes)


# moby's shape: the dataset lists the job that summarises the unit tests' reports, which
# another job wrote; it never checks out the repository
REPORT_JOB = """
on: [pull_request]
jobs:
  unit:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/checkout@v4
        with: {repository: acme/fixtures, path: fixtures}
      - run: go test -json ./... > unit-go-test-report.json
  unit-report:
    runs-on: ubuntu-latest
    needs: [unit]
    steps:
      - uses: actions/setup-go@v5
      - uses: actions/checkout@v4
        with: {repository: acme/fixtures, path: fixtures}
      - uses: actions/download-artifact@v4
        with: {name: test-reports-unit, path: /tmp/reports}
      - run: go install github.com/vearutop/teststat@v0.1.25
      - run: find /tmp/reports -name '*-go-test-report.json' -exec teststat -markdown {} +
"""


def test_a_job_that_needs_others_and_never_checks_out_the_repo_is_no_test_leg() -> None:
    github = {"repository": "acme/widget"}
    jobs = derive_pipelines({"ci.yml": REPORT_JOB}, [JobRef("unit-report")], "go", github=github)
    assert jobs.best.leg == "unit"  # the job whose reports it reads, as a fallback
    (report,) = [c for c in jobs.considered if c.leg == "unit-report"]
    assert not report.kept and "never checks out the repository" in report.why


# electron's shape: the test legs run on what the build job uploaded; the build job runs no
# test itself
BUILT_ELSEWHERE = """
on: [pull_request]
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: ./script/build.sh
      - uses: actions/upload-artifact@v4
        with: {name: dist, path: out/}
  test:
    runs-on: ubuntu-latest
    needs: [build]
    strategy:
      matrix:
        shard: [1, 2]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/download-artifact@v4
        with: {name: dist, path: out/}
      - run: npm test -- --shard=${{ matrix.shard }}
"""
# a job that needs no other one can only download what it uploaded itself
OWN_ARTIFACT = """
on: [pull_request]
jobs:
  report:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/download-artifact@v4
        with: {name: dist}
      - run: pytest tests/
"""


def test_test_legs_running_on_what_another_job_built_are_refused_for_that() -> None:
    from ci_runner.workflows import UnsupportedJob

    with pytest.raises(UnsupportedJob) as raised:
        derive_pipelines({"ci.yml": BUILT_ELSEWHERE}, [JobRef("test (1)")], "cpp")
    assert raised.value.reason == Refusal.ARTIFACTS, str(raised.value)
    assert "runs on what another job built" in str(raised.value)
    # a job that needs none downloads nothing from this run (its own upload, if any): the
    # download is skipped with a note and the leg runs
    jobs = derive_pipelines({"ci.yml": OWN_ARTIFACT}, [JobRef("report")], "python")
    assert jobs.best.leg == "report" and "actions/download-artifact@v4" in jobs.best.skipped_actions


# electron's shape: the dataset lists a job that checks a pull request's title, and the only
# other Linux job of its file tends the release project board through GitHub's CLI
HOUSEKEEPING = {
    ".github/workflows/pr.yml": """
on: [pull_request]
jobs:
  main:
    name: Validate PR Title
    runs-on: ubuntu-latest
    steps:
      - uses: amannn/action-semantic-pull-request@v5
  check:
    name: Check Stable Prep Items
    runs-on: ubuntu-latest
    steps:
      - run: |
          N=$(gh project list --owner acme --format json | jq -r '.projects[0].number')
          echo "PROJECT_NUMBER=$N" >> "$GITHUB_OUTPUT"
""",
}


def test_a_job_tending_the_repository_through_githubs_cli_is_no_test_leg() -> None:
    from ci_runner.workflows import UnsupportedJob

    with pytest.raises(UnsupportedJob) as raised:
        derive_pipelines(HOUSEKEEPING, [JobRef("Validate PR Title")], "cpp")
    assert raised.value.reason == Refusal.NO_TEST_JOB, str(raised.value)
    assert "a housekeeping leg, not a test job" in str(raised.value)


# electron's build.yml, shortened: a job that checks out and syncs, listed before the job
# that runs the tests through scripts Arena does not recognise as a test runner
UNRECOGNISED_LEGS = """
jobs:
  checkout-linux:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: node script/sync.js
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Run Electron Tests
        run: node script/spec-runner.js --runners=main
"""


def test_among_legs_of_unrecognised_commands_the_one_named_for_tests_comes_first() -> None:
    jobs = derive_pipelines(
        {"w.yml": UNRECOGNISED_LEGS}, [JobRef("checkout-linux"), JobRef("test")], "cpp"
    )
    assert jobs.best.leg == "test"
    (named,) = [c for c in jobs.considered if c.leg == "test"]
    assert "its name says it tests" in (named.why or "")


PULL_REQUEST = """
on:
  pull_request: {branches: [develop]}
  push: {branches: [develop]}
jobs:
  test:
    if: github.event_name == 'push'
    runs-on: ubuntu-latest
    steps:
      - name: From a fork
        if: github.event.pull_request.head.repo.full_name != github.repository
        run: echo "${{ github.event.pull_request.head.repo.full_name }} -> ${{ github.base_ref }}"
      - name: Pushes only
        if: github.event_name == 'push'
        run: echo push
      - name: Same repo only
        if: ${{ !github.event.pull_request.head.repo.fork }}
        run: echo secret
      - name: Labelled slow
        if: contains(github.event.pull_request.labels.*.name, 'slow')
        run: echo slow
      - name: Unknown
        run: echo "[${{ github.event.pull_request.milestone.title }}]"
      - name: Tests
        if: github.event_name == 'pull_request'
        run: go test ./... -run '${{ github.head_ref }}' -count=${{ github.event.number }}
"""


def test_expressions_read_a_pull_request_from_a_fork() -> None:
    github = {"repository": "acme/widget", "repository_owner": "acme", "sha": "0" * 40}
    derived = derive_pipeline({"ci.yml": PULL_REQUEST}, ["test"], "go", github=github)
    fork, unknown, tests = derived.pipeline.steps
    assert fork.run == 'echo "contributor/widget -> develop"'  # base: the workflow's branch
    assert unknown.run == 'echo "[]"'
    assert tests.run == "go test -json ./... -run 'arena-pull-request' -count=1"
    notes = "\n".join(derived.notes)
    # the job's own if: reads false for a pull request, but the job is listed: it ran
    assert (
        "the job's if: (github.event_name == 'push') reads false here; the job is listed, so "
        "it ran on the pull request: kept" in notes
    )
    for skipped in ("Pushes only", "Same repo only", "Labelled slow"):
        assert f"step {skipped!r} skipped" in notes
    assert "github.event.pull_request.milestone not known before the run: read as null" in notes


def test_an_unlisted_job_whose_if_reads_false_on_a_pull_request_is_dropped() -> None:
    workflow = (
        PULL_REQUEST + "  other:\n    runs-on: ubuntu-latest\n    steps: [{run: go test ./...}]\n"
    )
    jobs = derive_pipelines({"ci.yml": workflow}, ["*"], "go")
    dropped = next(r for r in jobs.considered if r.job_id == "test")
    assert (
        not dropped.kept and "the job's if: (github.event_name == 'push') is false" in dropped.why
    )
    assert jobs.best.leg == "other"


def test_run_defaults_of_the_workflow_and_the_job_and_a_steps_own_directory() -> None:
    workflow = """
defaults: {run: {working-directory: backend}}
jobs:
  inherits:
    runs-on: ubuntu-latest
    steps:
      - run: pytest
  overrides:
    runs-on: ubuntu-latest
    defaults: {run: {working-directory: "${{ github.workspace }}/frontend"}}
    steps:
      - run: pytest
      - run: pytest
        working-directory: ./e2e/../api
      - run: pytest
        working-directory: ../outside
"""
    inherits = derive_pipeline({"w.yml": workflow}, ["inherits"], "python").pipeline
    assert [s.workdir for s in inherits.steps] == ["backend"]
    derived = derive_pipeline({"w.yml": workflow}, ["overrides"], "python")
    assert [s.workdir for s in derived.pipeline.steps] == ["frontend", "api"]
    assert any("working-directory '../outside' is outside the checkout" in n for n in derived.notes)


def test_continue_on_error_and_timeout_minutes_of_a_step() -> None:
    workflow = """
jobs:
  test:
    runs-on: ubuntu-latest
    strategy: {matrix: {experimental: [true], minutes: [7]}}
    steps:
      - run: cargo build
        timeout-minutes: 0.5
      - run: cargo test --all
        continue-on-error: ${{ matrix.experimental }}
        timeout-minutes: ${{ matrix.minutes }}
      - run: cargo test --doc
"""
    build, tests, docs = derive_pipeline(
        {"w.yml": workflow}, ["test"], "rust", step_timeout_s=900
    ).pipeline.steps
    assert (build.timeout_s, build.continue_on_error) == (30, False)
    assert (tests.timeout_s, tests.continue_on_error) == (420, True)
    assert (docs.timeout_s, docs.continue_on_error) == (900, False)  # the caller's default


def test_include_only_matrix_legs_are_named_by_their_values() -> None:
    workflow = """
jobs:
  test:
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        include:
          - {os: ubuntu-22.04, go: "1.21"}
          - {os: ubuntu-latest, go: "1.22", race: true}
          - {os: windows-latest, go: "1.22"}
    steps:
      - run: go test ${{ matrix.race && '-race' || '' }} ./...
"""
    jobs = derive_pipelines({"w.yml": workflow}, ["test"], "go")
    assert [r.leg for r in jobs.considered] == [
        "test (ubuntu-22.04, 1.21)",
        "test (ubuntu-latest, 1.22, true)",
        "test (windows-latest, 1.22)",
    ]
    race = derive_pipeline({"w.yml": workflow}, ["test (ubuntu-latest, 1.22, true)"], "go")
    assert race.pipeline.steps[0].run == "go test -json -race ./..."
    assert race.toolchain_request == "1.22"


def test_the_jobs_services_are_rendered_for_its_leg() -> None:
    workflow = """
jobs:
  test:
    runs-on: ubuntu-latest
    strategy: {matrix: {postgres: ["15", "16"], port: [5433]}}
    env: {DB_PASSWORD: secret}
    services:
      db:
        image: postgres:${{ matrix.postgres }}
        env:
          POSTGRES_PASSWORD: ${{ env.DB_PASSWORD }}
          POSTGRES_DB: test_${{ matrix.postgres }}
        ports: ["${{ matrix.port }}:5432"]
        options: --health-cmd pg_isready
      cache: redis:7-alpine
      broken:
        image: mysql
        ports: ["not-a-port"]
    steps:
      - run: pytest
"""
    derived = derive_pipeline({"w.yml": workflow}, ["test (16, 5433)"], "python")
    services = derived.pipeline.services
    assert set(services) == {"db", "cache"}
    assert services["db"].image == "postgres:16"
    assert services["db"].env == {"POSTGRES_PASSWORD": "secret", "POSTGRES_DB": "test_16"}
    assert services["db"].ports == {5432: 5433}
    assert services["cache"].image == "redis:7-alpine" and services["cache"].ports == {}
    assert any("service 'broken' left out" in note for note in derived.notes)


def test_homebrew_and_chocolatey_lines_are_dropped_with_a_note() -> None:
    workflow = """
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - name: Tools
        run: |
          brew install ninja
          choco install cmake --yes
      - name: Build
        run: |
          brew update && \\
            brew install llvm
          cmake -B build
          cmake --build build
      - run: ctest --test-dir build
"""
    derived = derive_pipeline({"w.yml": workflow}, ["test"], "cpp")
    build, tests = derived.pipeline.steps
    assert build.run == "cmake -B build\ncmake --build build" and tests.run.startswith("ctest")
    # a Linux leg's brew install is Debian's package of the formula, in setup
    (tools,) = derived.pipeline.setup
    assert tools.run == "apt-get install -y --no-install-recommends ninja-build"
    notes = "\n".join(derived.notes)
    assert "step 'Tools': macOS/Windows-only lines dropped (choco install" in notes
    assert "step 'Build': macOS/Windows-only lines dropped (brew update && brew install llvm)" in (
        notes
    )


@pytest.mark.parametrize(
    ("given", "setup"),
    [
        ("{version: 9.7.0}", ["npm install -g pnpm@9.7.0", "pnpm install --frozen-lockfile"]),
        ("{version: '^8', run_install: true}", ["npm install -g 'pnpm@^8'\npnpm install"]),
        ("{}", ["npm install -g pnpm", "pnpm install --frozen-lockfile"]),
    ],
)
def test_pnpm_action_setup_installs_pnpm_with_the_images_npm(given: str, setup: list[str]) -> None:
    install = "" if "run_install" in given else "      - run: pnpm install --frozen-lockfile\n"
    workflow = f"""
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: pnpm/action-setup@v4
        with: {given}
      - uses: actions/setup-node@v4
        with: {{node-version: 20, cache: pnpm}}
{install}      - run: pnpm run build && pytest
"""
    derived = derive_pipeline({"w.yml": workflow}, ["test"], "python")
    assert [s.run for s in derived.pipeline.setup] == setup
    assert all(s.continue_on_error for s in derived.pipeline.setup)  # npm's registry: tried
    # the project's own pnpm install fills the workspace's node_modules: runs repeat it
    # offline from the store the build filled
    repeated = ["pnpm install --frozen-lockfile"] if install else []
    assert [s.run for s in derived.pipeline.steps] == [*repeated, "pnpm run build && pytest"]
    assert not derived.skipped_actions
    assert "uses actions/setup-node@v4 with node-version=20, cache=pnpm: provided by the image" in (
        "\n".join(derived.notes)
    )


# crussella0129/CubiKan's only job (its ci.yml from sprint 4 on), a Rust workspace: named for
# its lint, it formats, lints, checks and then runs every test of the workspace
QUALITY_GATE = """
name: Rust CI
"on":
  pull_request:
    branches: [dev, main]
jobs:
  quality:
    name: Rust quality gate
    runs-on: ubuntu-latest
    timeout-minutes: 15
    steps:
      - name: Check out repository
        uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1
        with:
          persist-credentials: false
      - name: Install stable Rust
        run: rustup toolchain install stable --profile minimal --component rustfmt,clippy
      - name: Check formatting
        run: cargo +stable fmt --all -- --check
      - name: Run Clippy
        run: cargo +stable clippy --workspace --all-targets --all-features -- -D warnings
      - name: Check workspace
        env:
          RUSTFLAGS: -D warnings
        run: cargo +stable check --workspace --all-targets
      - name: Run workspace tests
        run: cargo +stable test --workspace --all-targets
      - name: Run workspace doctests
        run: cargo +stable test --doc --workspace
"""


def test_a_job_named_for_its_lint_that_runs_the_tests_is_a_test_leg() -> None:
    """Its name ranks it after a plain test leg, and never drops it: it is the only leg."""
    derived = derive_pipeline({PATH: QUALITY_GATE}, ["Rust quality gate"], "rust")
    assert derived.leg == "Rust quality gate"
    assert (
        derived.pipeline.steps[-2].run
        == "cargo +stable test --no-fail-fast --workspace --all-targets"
    )
    notes = "\n".join(derived.notes)
    assert "named as a lint leg too, ranked after plain test legs" in notes
    plain = QUALITY_GATE.replace(
        "jobs:\n",
        "jobs:\n  unit:\n    runs-on: ubuntu-latest\n    steps:\n      - run: cargo test --workspace\n",
    )
    both = derive_pipeline({PATH: plain}, ["Rust quality gate", "unit"], "rust")
    assert both.leg == "unit"
    # a job whose commands are only lint stays one, and alone is no test job
    with pytest.raises(WorkflowError, match="a lint leg, not a test job"):
        derive_pipeline(
            {PATH: QUALITY_GATE.split("      - name: Check workspace")[0]},
            ["Rust quality gate"],
            "rust",
        )
