"""A later task of a repository is built on the image of its first one (the repository
layer) and adds one thin layer of its own; its build is online although that image's runs
are not; with the switch off, it builds whole."""

from __future__ import annotations

from pathlib import Path

import docker

from arena.tasks.gitrepo import commit_directory
from ci_runner import CIRequest, CIRunner, CISettings, CIStatus, Pipeline
from ci_runner.environments import CACHE_DIR, EnvironmentBuilder, EnvironmentSpec
from ci_runner.images import ImageBuilder
from ci_runner.providers.docker.provider import DockerProvider
from tests.ci_runner.env_builds import remove_built_images
from tests.ci_runner.env_projects import GO_FILES
from tests.conftest import write_tree

MB = 1_000_000

# the setup step fails where the environment image's offline switch reached the build
PIPELINE = Pipeline.model_validate(
    {
        "setup": [
            {"name": "online", "run": 'test "$(go env GOPROXY)" != off'},
            {"name": "modules", "run": "go mod download"},
        ],
        "steps": [{"name": "test", "run": "go test -json ./... | tee report.json"}],
        "report": {"format": "go-json", "path": "report.json"},
    }
)

CUBE = {
    "area/cube.go": "package area\n\nfunc Cube(s int) int { return s * s * s }\n",
    "area/cube_test.go": (
        'package area\n\nimport "testing"\n\nfunc TestCube(t *testing.T) {\n'
        '\tif Cube(2) != 8 {\n\t\tt.Fatal("Cube")\n\t}\n}\n'
    ),
}


def _commit(tmp_path: Path, repo: Path, files: dict[str, str]) -> str:
    source = tmp_path / f"tree-{len(list(tmp_path.iterdir()))}"
    write_tree(source, files)
    return commit_directory(source, repo)


def _layers(client: docker.DockerClient, tag: str) -> list[str]:
    return list(client.images.get(tag).attrs["RootFS"]["Layers"])


def _size(client: docker.DockerClient, tag: str) -> int:
    return int(client.images.get(tag).attrs["Size"])


def test_a_later_task_is_one_thin_layer_over_the_first_tasks_image(
    environments: EnvironmentBuilder,
    env_settings: CISettings,
    docker_client: docker.DockerClient,
    tmp_path: Path,
) -> None:
    repo = tmp_path / "shapes.git"
    first = EnvironmentSpec(
        repo=str(repo), commit=_commit(tmp_path, repo, GO_FILES), language="go", pipeline=PIPELINE
    )
    first_image = environments.ensure(first)
    first_record = environments.record(first)
    assert first_record is not None and first_record.built_on is None
    # sealed: go would mark an entry over an hour old used by changing it, a copy-up
    unsealed = f"find {CACHE_DIR}/go-build -type f ! -newermt 2099-01-01 | wc -l"
    seen = docker_client.containers.run(first_image, ["sh", "-c", unsealed], remove=True)
    assert seen.decode().strip() == "0"

    later = first.model_copy(update={"commit": _commit(tmp_path, repo, GO_FILES | CUBE)})
    later_image = environments.ensure(later)
    record = environments.record(later)
    assert record is not None and record.built_on == first_image

    below = _layers(docker_client, first_image)
    assert _layers(docker_client, later_image) == [
        *below,
        *_layers(docker_client, later_image)[-1:],
    ]
    toolchain = environments.images.ensure_toolchain("go", environments.toolchain_for(first))
    first_own = _size(docker_client, first_image) - _size(docker_client, toolchain)
    later_own = _size(docker_client, later_image) - _size(docker_client, first_image)
    # the first holds the standard library's and the tests' build cache; the later one only
    # what its commit changed (its package, its test's result)
    assert later_own < first_own / 5 and later_own < 10 * MB, (first_own, later_own)

    runner = CIRunner(env_settings, DockerProvider(env_settings, docker_client))
    result = runner.run(
        CIRequest(repo=later.repo, commit=later.commit, pipeline=PIPELINE, image=later_image)
    )
    assert result.status is CIStatus.PASSED, [s.log[-800:] for s in result.steps]
    assert "example.com/shapes/area::TestCube" in result.tests
    # the run sees both layers' caches: the package the later commit left alone replays its
    # result from the first task's warm-up, the one it changed from its own
    log = next(s.log for s in result.steps if s.name == "test")
    assert "example.com/shapes/perimeter\\t(cached)" in log, log[-2000:]
    assert "example.com/shapes/area\\t(cached)" in log, log[-2000:]


def test_with_layers_off_two_tasks_of_a_repository_share_nothing_of_their_own(
    docker_client: docker.DockerClient, env_settings: CISettings, tmp_path: Path
) -> None:
    settings = env_settings.model_copy(
        update={"cache_dir": tmp_path / "cache", "env_layers": False}
    )
    builder = EnvironmentBuilder(ImageBuilder(DockerProvider(settings, docker_client), settings))
    repo = tmp_path / "shapes.git"
    first = EnvironmentSpec(
        repo=str(repo), commit=_commit(tmp_path, repo, GO_FILES), language="go", pipeline=PIPELINE
    )
    try:
        first_image = builder.ensure(first)
        later = first.model_copy(update={"commit": _commit(tmp_path, repo, GO_FILES | CUBE)})
        later_image = builder.ensure(later)
        record = builder.record(later)
        assert record is not None and record.built_on is None
        assert _layers(docker_client, first_image)[-1] not in _layers(docker_client, later_image)
    finally:
        remove_built_images(docker_client, settings)
