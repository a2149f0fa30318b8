"""What a run from an environment image writes to its caches is bounded by `disk_mb`, on a
layer of its own over the image's that goes with the run, and the host's disk stays as it was."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import docker
import docker.errors
import pytest

from arena.tasks.gitrepo import commit_directory
from ci_runner import CIRequest, CIRunner, CISettings, CIStatus, Limits, Pipeline, SandboxError
from ci_runner.environments import CACHE_DIR, EnvironmentBuilder, EnvironmentSpec
from ci_runner.image_layout import ENV_CACHE_LAYERS_LABEL, ENV_IMAGE_LABEL
from ci_runner.images import ImageBuilder
from ci_runner.outcome import step_problem
from ci_runner.providers.docker.cache_layer import CacheLayerUnavailable, cache_lower_dirs, is_full
from ci_runner.providers.docker.provider import DockerProvider
from ci_runner.providers.docker.sandbox import LABEL, DockerSandbox, sweep_orphans
from ci_runner.sandbox import StopCause
from ci_runner.types import StepResult
from tests.ci_runner.env_builds import remove_built_images
from tests.ci_runner.env_projects import GO_FILES, GO_PIPELINE
from tests.conftest import write_tree

MIB = 1 << 20

# What the engine says of an image, decided without an engine.


def test_the_overlay_lies_over_the_images_own_top_layer() -> None:
    image = {
        "GraphDriver": {
            "Name": "overlay2",
            "Data": {"UpperDir": "/var/lib/docker/overlay2/abc/diff", "LowerDir": "/x:/y"},
        }
    }
    assert cache_lower_dirs(image, CACHE_DIR) == "/var/lib/docker/overlay2/abc/diff/opt/arena/cache"


def test_an_image_built_on_a_repository_layer_lies_over_both_layers_of_caches() -> None:
    """The repository layer's caches (the layer just below) are the run's too."""
    image = {
        "GraphDriver": {
            "Name": "overlay2",
            "Data": {"UpperDir": "/d/top/diff", "LowerDir": "/d/repo/diff:/d/tool/diff:/d/base"},
        },
        "Config": {"Labels": {ENV_IMAGE_LABEL: "rust", ENV_CACHE_LAYERS_LABEL: "2"}},
    }
    assert (
        cache_lower_dirs(image, CACHE_DIR)
        == "/d/top/diff/opt/arena/cache:/d/repo/diff/opt/arena/cache"
    )
    image["GraphDriver"]["Data"]["LowerDir"] = ""  # type: ignore[index]
    with pytest.raises(CacheLayerUnavailable, match="2 of its layers"):
        cache_lower_dirs(image, CACHE_DIR)


@pytest.mark.parametrize(
    "driver",
    [{"Name": "overlayfs", "Data": None}, {"Name": "vfs", "Data": {}}, {}],
    ids=["containerd-snapshotter", "vfs", "none"],
)
def test_an_engine_without_layer_directories_is_refused_with_what_it_needs(
    driver: dict[str, object],
) -> None:
    with pytest.raises(CacheLayerUnavailable, match="need the overlay2 driver"):
        cache_lower_dirs({"GraphDriver": driver}, CACHE_DIR)


def test_a_layer_is_full_when_less_than_a_hundredth_or_a_mib_is_left() -> None:
    size = 2048 * MIB
    assert is_full(0, size) and is_full(4096, size) and is_full(20 * MIB, size)
    assert not is_full(21 * MIB, size) and not is_full(size, size)
    assert is_full(MIB - 1, 16 * MIB) and not is_full(MIB, 16 * MIB)


def test_a_step_that_hit_the_cache_limit_says_so_as_the_codes_fault() -> None:
    step = StepResult(
        name="fill", exit_code=1, duration_s=1.0, log="No space left", stopped_by=StopCause.DISK
    )
    problem = step_problem(step, Limits(disk_mb=1024))
    assert problem == "step 'fill' failed: it wrote more than 1024 MiB outside the workspace"
    assert not StopCause.DISK.is_infrastructure


# On the engine: a Go environment image (no module to fetch, so it builds offline and fast).


@pytest.fixture(scope="module")
def go_env(
    docker_client: docker.DockerClient,
    env_settings: CISettings,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, str, str]]:
    """(repo, commit, image) of a Go project's environment, removed afterwards."""
    root = tmp_path_factory.mktemp("go-env")
    write_tree(root / "src", GO_FILES)
    repo = root / "repo.git"
    commit = commit_directory(root / "src", repo)
    builder = EnvironmentBuilder(
        ImageBuilder(DockerProvider(env_settings, docker_client), env_settings)
    )
    spec = EnvironmentSpec(repo=str(repo), commit=commit, language="go", pipeline=GO_PIPELINE)
    yield str(repo), commit, builder.ensure(spec)
    remove_built_images(docker_client, env_settings)


def _ours(client: docker.DockerClient, pid: int | None = None) -> tuple[list[str], list[str]]:
    """Containers and volumes labelled as this process's (or `pid`'s) sandboxes."""
    label: dict[str, str | list[str] | bool] = {"label": f"{LABEL}.pid={pid or os.getpid()}"}
    containers = [
        str(c.name) for c in client.containers.list(ignore_removed=True, all=True, filters=label)
    ]
    volumes = client.api.volumes(filters=label).get("Volumes") or []
    return containers, [str(v["Name"]) for v in volumes]


def _layer_mounts() -> set[str]:
    """The cache layers' mounts in this host's mount table (the engine is local here)."""
    mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    return {line.split()[4] for line in mounts if "/volumes/arena-ci-" in line}


def _left_mounted(client: docker.DockerClient) -> set[str]:
    """Cache-layer mounts whose volume is gone: what a run left behind. The sandboxes of other
    processes on the engine (a parallel Docker test's, the compose stack's) keep theirs
    mounted, with their volumes; one removed between the two looks is looked at again."""
    leaked: set[str] = set()
    for _ in range(3):
        mounts = _layer_mounts()
        volumes = {str(v["Name"]) for v in client.api.volumes().get("Volumes") or []}
        leaked = {m for m in mounts if m.split("/volumes/")[1].split("/")[0] not in volumes}
        if not leaked:
            break
        time.sleep(1)
    return leaked


class FreeDisk:
    """The least free space of the engine's data directory seen while it runs."""

    def __init__(self, path: str) -> None:
        self._path = path
        self.before = shutil.disk_usage(path).free
        self.least = self.before
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._done.wait(0.05):
            self.least = min(self.least, shutil.disk_usage(self._path).free)

    def __enter__(self) -> FreeDisk:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._done.set()
        self._thread.join()
        self.least = min(self.least, shutil.disk_usage(self._path).free)


def _engine_root(client: docker.DockerClient) -> str:
    root = str(client.info().get("DockerRootDir") or "")
    if not os.path.isdir(root):
        pytest.skip("the engine's data directory is not on this machine")
    return root


def _request(go_env: tuple[str, str, str], steps: list[dict[str, object]]) -> CIRequest:
    repo, commit, image = go_env
    pipeline = Pipeline.model_validate(
        {"steps": [*steps, {"name": "report", "run": "echo 'test probe ... ok'"}]}
        | {"report": {"format": "libtest", "step": "report"}}
    )
    return CIRequest(repo=repo, commit=commit, pipeline=pipeline, image=image)


@pytest.mark.docker
def test_a_run_writing_3_gb_into_its_caches_fails_at_the_limit_and_the_host_disk_stays(
    docker_client: docker.DockerClient,
    env_settings: CISettings,
    go_env: tuple[str, str, str],
) -> None:
    limit_mb = 1024
    fill = f"{CACHE_DIR}/go-build/fill"
    steps: list[dict[str, object]] = [
        {  # 3 GiB in chunks of 64 MiB; what got written is said before the step fails
            "name": "fill",
            "run": f"for i in $(seq 48); do dd if=/dev/zero bs=1M count=64 status=none >> {fill}"
            f" || {{ echo WROTE $(( $(stat -c %s {fill}) >> 20 )) MiB; exit 1; }}; done",
        }
    ]
    request = _request(go_env, steps).model_copy(update={"limits": Limits(disk_mb=limit_mb)})
    runner = CIRunner(env_settings, DockerProvider(env_settings, docker_client))
    mounted = _layer_mounts()
    with FreeDisk(_engine_root(docker_client)) as disk:
        result = runner.run(request)
    fill_step = result.steps[0]
    assert result.status is CIStatus.FAILED, result.error
    assert f"wrote more than {limit_mb} MiB outside the workspace" in (result.error or "")
    assert fill_step.stopped_by is StopCause.DISK, fill_step.log[-500:]
    assert "No space left on device" in fill_step.log, fill_step.log[-500:]
    wrote = int(fill_step.log.split("WROTE ")[1].split()[0])
    assert limit_mb - 16 <= wrote <= limit_mb, fill_step.log[-500:]  # up to the limit, no more
    drop_mb = (disk.before - disk.least) / MIB
    assert drop_mb < limit_mb + 512, f"the host's disk lost {drop_mb:.0f} MiB during the run"
    assert _ours(docker_client) == ([], []), "left behind"
    assert _left_mounted(docker_client) <= mounted, "left mounted"


@pytest.mark.docker
def test_an_ordinary_run_reads_the_images_caches_and_writes_within_the_limit(
    docker_client: docker.DockerClient,
    env_settings: CISettings,
    go_env: tuple[str, str, str],
) -> None:
    entry = f"$(find {CACHE_DIR}/go-build -type f -name '*-d' -print -quit)"
    steps: list[dict[str, object]] = [
        # the build's warm-up filled Go's build cache: the tests come from it
        {"name": "cached", "run": "go test -json ./... > out.json; grep -q '(cached)' out.json"},
        {"name": "read-only root", "run": "! touch /opt/arena/x /usr/x 2>/dev/null"},
        # the caches' overlay honours no set-uid bit and no device node
        {
            "name": "nosuid",
            "run": f"grep ' {CACHE_DIR} ' /proc/mounts | grep nosuid | grep -q nodev",
        },
        # a file of the image's changes copy-on-write; new ones take room up to the limit
        {"name": "change", "run": f'f={entry}; test -s "$f" && echo more >> "$f"'},
        {"name": "write", "run": f"dd if=/dev/zero of={CACHE_DIR}/new bs=1M count=200"},
        {"name": "delete", "run": f"rm -rf {CACHE_DIR}/go-build && test ! -e {CACHE_DIR}/go-build"},
    ]
    runner = CIRunner(env_settings, DockerProvider(env_settings, docker_client))
    result = runner.run(_request(go_env, steps).model_copy(update={"limits": Limits(disk_mb=256)}))
    assert result.status is CIStatus.PASSED, (
        result.error,
        [(s.name, s.log[-500:]) for s in result.steps],
    )
    again = runner.run(_request(go_env, steps[:1]))  # the image's caches are as they were
    assert again.status is CIStatus.PASSED, [(s.name, s.log[-500:]) for s in again.steps]
    assert _ours(docker_client) == ([], [])


@pytest.fixture
def fake_env_image(docker_client: docker.DockerClient, images: dict[str, str]) -> Iterator[str]:
    """An image labelled as an environment whose own layer lacks the caches."""
    container = docker_client.containers.create(images["python"], ["true"], network_mode="none")
    tag = f"arena-test/no-caches:{os.getpid()}"
    try:
        docker_client.api.commit(
            str(container.id),
            repository=tag.split(":")[0],
            tag=tag.split(":")[1],
            conf={"Labels": {ENV_IMAGE_LABEL: "python"}},
        )
    finally:
        container.remove(force=True)
    yield tag
    docker_client.images.remove(tag, force=True)


@pytest.mark.docker
def test_a_sandbox_that_cannot_mount_its_layer_leaves_nothing_behind(
    docker_client: docker.DockerClient, fake_env_image: str
) -> None:
    started = time.monotonic()
    with pytest.raises(SandboxError, match="cannot start the sandbox container"):
        DockerSandbox.start(docker_client, fake_env_image, Limits(disk_mb=64))
    assert time.monotonic() - started < 30
    assert _ours(docker_client) == ([], [])


_HOLD = """
import sys, time, docker
from ci_runner.providers.docker.sandbox import DockerSandbox
from ci_runner.types import Limits
box = DockerSandbox.start(docker.from_env(), sys.argv[1], Limits(disk_mb=64))
box.exec("echo x > /opt/arena/cache/x", env={}, workdir="/workspace", timeout_s=30,
         max_output_bytes=1024)
print("started", flush=True)
time.sleep(600)
"""


@pytest.mark.docker
def test_the_sweep_removes_the_layer_of_a_runner_that_was_killed(
    docker_client: docker.DockerClient, go_env: tuple[str, str, str]
) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, go_env[2]], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "started\n"
        containers, volumes = _ours(docker_client, holder.pid)
        assert len(containers) == 2 and len(volumes) == 2  # the sandbox, the keeper
        swept = sweep_orphans(docker_client)  # its owner is alive: none of it goes
        assert not set(containers + volumes) & set(swept)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    sweep_orphans(docker_client)  # (a sweep beside it may remove some first: judge what is left)
    assert _ours(docker_client, holder.pid) == ([], [])
    assert not {m for m in _layer_mounts() if any(v in m for v in volumes)}
