"""A runner that keeps spares starts the next run's sandbox ahead, and a spare is as fresh
as a sandbox started for the run: nothing of an earlier run is in it."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import docker
import pytest

from ci_runner import CIRequest, CIRunner, CISettings, CIStatus, Pipeline
from ci_runner.providers.docker.provider import DockerProvider
from ci_runner.providers.docker.sandbox import LABEL, DockerSandbox
from ci_runner.spares import SpareSandboxes
from ci_runner.types import Limits
from tests.conftest import MakeRepo, our_containers, sandboxes_created

# a run leaves marks everywhere it may write, and fails when it finds one left before it
LEAVE_AND_LOOK = Pipeline.model_validate(
    {
        "steps": [
            {
                "name": "fresh",
                "run": 'for d in /tmp "$HOME" /workspace; do '
                '[ ! -e "$d/mark" ] || { echo "left in $d"; exit 1; }; '
                'echo x > "$d/mark"; done; '
                'printf \'<testsuite><testcase classname="t" name="ok"/></testsuite>\' > r.xml',
            }
        ],
        "report": {"format": "junit", "path": "r.xml"},
    }
)


def test_the_next_run_gets_a_spare_that_holds_nothing_of_the_last(
    docker_client: docker.DockerClient,
    ci_settings: CISettings,
    images: dict[str, str],
    make_repo: MakeRepo,
    no_containers_left: None,
) -> None:
    repo, commit = make_repo({"README.md": "x\n"})
    request = CIRequest(repo=repo, commit=commit, pipeline=LEAVE_AND_LOOK, image=images["python"])
    runner = CIRunner(ci_settings, DockerProvider(ci_settings, docker_client), spares=True)
    try:
        assert runner.run(request).status is CIStatus.PASSED  # starts its own and a spare
        with sandboxes_created(docker_client) as created:
            results = [runner.run(request) for _ in range(3)]
        assert [r.status for r in results] == [CIStatus.PASSED] * 3, results
        # each run took the spare started during the one before, and asked for the next
        assert created.count == 3
    finally:
        runner.close()
    assert not our_containers(docker_client)  # spares and retired sandboxes all removed


def test_a_spare_past_its_idle_time_is_removed_not_handed_out(
    docker_client: docker.DockerClient, images: dict[str, str], no_containers_left: None
) -> None:
    spares: SpareSandboxes[DockerSandbox] = SpareSandboxes(idle_s=0.5)
    limits = Limits(run_timeout_s=60)
    try:
        spares.refill("k", lambda: DockerSandbox.start(docker_client, images["python"], limits))
        time.sleep(1.0)
        assert spares.take("k") is None
        spares.refill("k", lambda: DockerSandbox.start(docker_client, images["python"], limits))
        fresh = spares.take("k")
        assert fresh is not None
        sandbox = fresh.result()
        spares.retire(sandbox)
    finally:
        spares.close()
    assert not our_containers(docker_client)


@pytest.mark.parametrize("how", ["exit", "dropped"])
def test_spares_are_removed_when_the_process_ends_without_closing_them(
    how: str,
    docker_client: docker.DockerClient,
    ci_settings: CISettings,
    images: dict[str, str],
    make_repo: MakeRepo,
) -> None:
    repo, commit = make_repo({"README.md": "x\n"})
    request = CIRequest(repo=repo, commit=commit, pipeline=LEAVE_AND_LOOK, image=images["python"])
    script = (
        "import sys, gc\n"
        "from ci_runner import CIRunner, CIRequest, CISettings\n"
        "runner = CIRunner(CISettings.model_validate_json(sys.argv[1]), spares=True)\n"
        "print(runner.run(CIRequest.model_validate_json(sys.argv[2])).status.value)\n"
        + ("del runner; gc.collect(); print('dropped')\n" if how == "dropped" else "")
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script, ci_settings.model_dump_json(), request.model_dump_json()],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ},
    )
    out, err = child.communicate(timeout=180)
    assert child.returncode == 0, err
    assert out.split()[0] == "passed", out
    label = {"label": f"{LABEL}.pid={child.pid}"}
    assert docker_client.containers.list(ignore_removed=True, all=True, filters=label) == []
