"""Ctrl-C or SIGTERM in the middle of a run leaves no container and no run directory behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import docker
import pytest

from ci_runner import CISettings
from ci_runner.providers.docker.sandbox import LABEL
from tests.command import ARENA
from tests.conftest import MakeRepo


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_interrupted_run_cleans_up(
    signum: int,
    tmp_path: Path,
    make_repo: MakeRepo,
    ci_settings: CISettings,
    images: dict[str, str],
    docker_client: docker.DockerClient,
) -> None:
    repo, commit = make_repo({"README.md": "x\n"})
    task = tmp_path / "task.json"
    task.write_text(
        json.dumps(
            {
                "instance_id": "sleepy",
                "repo": repo,
                "base_commit": commit,
                "language": "python",
                "pipeline": {
                    "steps": [{"name": "nap", "run": "sleep 120"}],
                    "report": {"format": "junit", "path": "r.xml"},
                },
            }
        )
    )
    cache = tmp_path / "cache"
    process = subprocess.Popen(
        [ARENA, "ci", "run", "--task", str(task)],
        env={**os.environ, "ARENA_CACHE_DIR": str(cache)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # as in a terminal: a suite started in the background (`cmd &`) inherits SIGINT ignored
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    label = {"label": f"{LABEL}.pid={process.pid}"}
    deadline = time.monotonic() + 120
    while not docker_client.containers.list(
        ignore_removed=True, filters={**label, "status": "running"}
    ):
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        assert time.monotonic() < deadline, "the sandbox never started"
        time.sleep(0.2)
    time.sleep(1)  # well inside the step
    process.send_signal(signum)
    process.wait(timeout=60)
    assert process.returncode != 0
    assert docker_client.containers.list(ignore_removed=True, all=True, filters=label) == []
    runs = cache / "runs"
    assert not runs.exists() or list(runs.iterdir()) == []
