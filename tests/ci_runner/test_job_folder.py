"""Jobs that check the repository out into a subfolder (`actions/checkout` with `path:`), as
electron's build jobs do: their steps name paths from the job's folder, above the checkout."""

from __future__ import annotations

import docker
import pytest

from ci_runner import CIRequest, CIRunner, CISettings, CIStatus
from ci_runner.environments import EnvironmentBuilder, EnvironmentSpec
from ci_runner.job_folder import JOB_FOLDER
from ci_runner.providers.docker.provider import DockerProvider
from ci_runner.workflows import derive_pipeline
from tests.ci_runner.env_projects import PYTHON_FILES
from tests.conftest import MakeRepo

# electron's pipeline-segment-electron-build.yml, shortened: the job makes `src`, checks out
# into src/electron, uses local actions by their path under it, and runs steps from above it
SUBFOLDER_WORKFLOW = """
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
    - name: Create src dir
      run: mkdir src
    - name: Checkout Electron
      uses: actions/checkout@v4
      with:
        path: src/electron
        fetch-depth: 0
    - name: Install Dependencies
      uses: ./src/electron/.github/actions/install-dependencies
    - name: Generate DEPS Hash
      run: |
        test "$GITHUB_WORKSPACE" = "$PWD" && test -f src/electron/uses_six.py
        python -c "print('hash')" > src/electron/.depshash
        echo "DEPSHASH=$(cat src/electron/.depshash)" >> $GITHUB_ENV
    - name: Test
      working-directory: src/electron
      run: test "$DEPSHASH" = hash && python -m pytest -q -p no:cacheprovider
"""
ACTION = """
runs:
  using: composite
  steps:
  - run: pip install six
    shell: bash
"""
FILES = {
    **PYTHON_FILES,
    ".github/workflows/build.yml": SUBFOLDER_WORKFLOW,
    ".github/actions/install-dependencies/action.yml": ACTION,
}


def test_a_job_checking_out_into_a_subfolder_runs_its_steps_from_the_job_folder() -> None:
    derived = derive_pipeline(
        {".github/workflows/build.yml": SUBFOLDER_WORKFLOW},
        ["build"],
        "python",
        read_file=FILES.get,
    )
    pipeline = derived.pipeline
    assert pipeline.checkout_path == "src/electron"
    assert pipeline.env["GITHUB_WORKSPACE"] == JOB_FOLDER
    # the local action is read under the checkout; its step runs in the job's folder
    layout, install = pipeline.setup
    assert layout.run == "mkdir -p src && ln -sfn /workspace src/electron"
    assert install.run == "pip install six" and install.job_workdir == "."
    where = {s.name: (s.workdir, s.job_workdir) for s in pipeline.steps}
    assert where["Create src dir"] == (".", ".")  # before the checkout, in the job's folder
    assert where["Checkout Electron"] == (".", ".")
    assert where["Generate DEPS Hash"] == (".", ".")
    assert where["Test"] == (".", None)  # its folder is the checkout: the repository's root
    assert [s.name for s in pipeline.steps][:2] == ["Create src dir", "Checkout Electron"]


@pytest.mark.docker
def test_a_subfolder_checkout_builds_and_runs_as_on_githubs_runner(
    docker_client: docker.DockerClient,
    env_settings: CISettings,
    environments: EnvironmentBuilder,
    make_repo: MakeRepo,
) -> None:
    repo, commit = make_repo(FILES)
    derived = derive_pipeline(
        {".github/workflows/build.yml": SUBFOLDER_WORKFLOW},
        ["build"],
        "python",
        read_file=FILES.get,
    )
    spec = EnvironmentSpec(repo=repo, commit=commit, language="python", pipeline=derived.pipeline)
    image = environments.ensure(spec)
    runner = CIRunner(env_settings, DockerProvider(env_settings, docker_client))
    request = CIRequest(repo=repo, commit=commit, pipeline=derived.pipeline, image=image)
    result = runner.run(request)
    failed = [(s.name, s.log[-600:]) for s in result.steps if not s.succeeded]
    assert result.status is CIStatus.PASSED, failed
    assert [t for t, outcome in result.tests.items() if outcome.value == "passed"], result.tests
