"""Pipelines derived from GitHub Actions jobs."""

import pytest

from ci_runner.pipeline import ReportFormat
from ci_runner.workflows import WorkflowError, derive_pipeline

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
            {"w.yml": "jobs: {a: {steps: [{run: make}]}}"},
            ["a"],
            "no step runs tests",
        ),
    ],
)
def test_unusable_jobs_are_explained(
    workflows: dict[str, str], jobs: list[str], message: str
) -> None:
    with pytest.raises(WorkflowError, match=message):
        derive_pipeline(workflows, jobs, "rust")
