"""The service's sandboxes run under ARENA_LIMITS, as the command line's do."""

from __future__ import annotations

import json
from pathlib import Path

import docker
import pytest

from arena.scrub import KnownSecrets
from arena.store.pool import open_pool
from arena.store.settings import ServiceSettings
from arena.tasks.schema import Task
from ci_runner import CISettings
from ci_runner.image_layout import WORKSPACE
from ci_runner.images import ImageBuilder
from ci_runner.providers.docker.provider import DockerProvider
from tests.conftest import MakeRepo
from workers.services import Services

MEMORY_MB = 1234
DISK_MB = 300

# the memory cgroup's limit (v2, else v1), then the workspace tmpfs's size in KiB
PROBE = (
    "cat /sys/fs/cgroup/memory.max 2>/dev/null"
    " || cat /sys/fs/cgroup/memory/memory.limit_in_bytes;"
    f" df -k --output=size {WORKSPACE} | tail -n 1"
)


@pytest.mark.docker
def test_a_service_sandbox_runs_under_the_memory_and_disk_of_arena_limits(
    database_url: str,
    make_repo: MakeRepo,
    ci_settings: CISettings,
    docker_client: docker.DockerClient,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("ARENA_LIMITS", json.dumps({"memory_mb": MEMORY_MB, "disk_mb": DISK_MB}))
    monkeypatch.setenv("ARENA_CACHE_DIR", str(ci_settings.cache_dir))
    repo, commit = make_repo({"README.md": "limits\n"})
    task = Task.model_validate(
        {
            "instance_id": "limits",
            "repo": repo,
            "base_commit": commit,
            "language": "python",
            "image": ImageBuilder(DockerProvider(ci_settings, docker_client), ci_settings).ensure(
                "python"
            ),
            "patch": "",
            "pipeline": {
                "steps": [{"name": "limits", "run": PROBE}],
                "report": {"format": "junit", "path": "report.xml"},
            },
        }
    )
    pool = open_pool(database_url, max_size=2)
    try:
        service = Services(settings=ServiceSettings(), pool=pool, redis=None, slots=None, secrets=KnownSecrets())  # type: ignore[arg-type]  # fmt: skip
        result = service.ci.run(task, ())
    finally:
        pool.close()
    step = next(s for s in result.steps if s.name == "limits")
    memory, workspace_kib = step.log.split()[-2:]
    # the sandbox's memory holds the workspace too (a tmpfs is charged to it)
    assert int(memory) == (MEMORY_MB + DISK_MB) * 1024 * 1024
    assert int(workspace_kib) == DISK_MB * 1024
