"""`arena tasks build-env --jobs N` and `arena tasks gc` with a real Docker engine.

The engine is shared: every image these tests make has a name of their own, and `gc` is only
ever run without `--any-cache`, so it can remove nothing but what this test's cache recorded.
"""

from __future__ import annotations

import contextlib
import io
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import docker.errors
import pytest

from arena.ci import environment_spec
from arena.tasks.importer import write_jsonl
from arena.tasks.schema import Language, Task
from arena.tasks.sources import library_path
from ci_runner import CISettings, Pipeline
from ci_runner.environments import EnvironmentBuilder, EnvironmentRecord
from ci_runner.image_layout import ENV_IMAGE_LABEL
from ci_runner.images import ImageBuilder
from ci_runner.providers.docker.provider import DockerProvider
from tests.ci_runner.env_builds import build_settings, remove_built_images, run_arena_building
from tests.ci_runner.env_projects import PYTHON_FILES, python_pipeline
from tests.conftest import MakeRepo

pytestmark = pytest.mark.docker
_SETUP_ONLY = Pipeline.model_validate(
    {
        "setup": [{"name": "deps", "run": "true"}],
        "steps": [{"name": "test", "run": "true"}],
        "report": {"format": "libtest", "step": "test"},
    }
)


def _task(name: str, repo: str, commit: str, pipeline: Pipeline) -> Task:
    return Task(
        instance_id=name,
        repo=repo,
        base_commit=commit,
        language=Language("python"),
        pipeline=pipeline,
    )


@pytest.fixture
def settings(tmp_path: Path) -> CISettings:
    return build_settings(tmp_path / "cache")


@pytest.fixture
def made(docker_client: docker.DockerClient, settings: CISettings) -> Iterator[list[str]]:
    """Tags this test makes itself; removed afterwards, as is whatever it built."""
    tags: list[str] = []
    yield tags
    for tag in tags:
        with contextlib.suppress(docker.errors.ImageNotFound):
            docker_client.images.remove(tag)
    remove_built_images(docker_client, settings)


def _labelled_image(client: docker.DockerClient, base: str, tag: str) -> None:
    """A small environment-labelled image (1 MB of its own) under `tag`."""
    dockerfile = f"FROM {base}\nRUN head -c 1000000 /dev/urandom > /opt/filler\n"
    client.images.build(
        fileobj=io.BytesIO(dockerfile.encode()),
        tag=tag,
        labels={ENV_IMAGE_LABEL: "python"},
        network_mode="none",
        rm=True,
    )


def _record(settings: CISettings, tag: str) -> Path:
    path = settings.environments_dir / f"{tag.rpartition(':')[2]}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(EnvironmentRecord(key=tag.rpartition(":")[2], tag=tag).model_dump_json())
    return path


def test_gc_removes_the_images_of_tasks_gone_from_the_library_and_keeps_the_rest(
    docker_client: docker.DockerClient,
    settings: CISettings,
    made: list[str],
    make_repo: MakeRepo,
    images: dict[str, str],
) -> None:
    repo, commit = make_repo(PYTHON_FILES)
    kept_task = _task("still-here-1", repo, commit, _SETUP_ONLY)
    write_jsonl(library_path(settings.cache_dir), [kept_task])
    environments = EnvironmentBuilder(
        ImageBuilder(DockerProvider(settings, docker_client), settings)
    )
    state = environments.state(environment_spec(kept_task))
    assert state is not None and state.tag is not None
    kept, gone = state.tag, f"arena/env-python:gc-test-{uuid.uuid4().hex[:12]}"
    elsewhere = f"arena/env-python:gc-other-{uuid.uuid4().hex[:12]}"  # another cache's
    for tag in (kept, gone, elsewhere):
        made.append(tag)
        _labelled_image(docker_client, images["python"], tag)
    kept_record, gone_record = _record(settings, kept), _record(settings, gone)

    dry = run_arena_building(["tasks", "gc", "--dry-run"], settings)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert gone in dry.stdout and kept not in dry.stdout and elsewhere not in dry.stdout
    assert "would remove 1 environment image(s), 1 MB freed" in dry.stdout
    assert docker_client.images.get(gone) and gone_record.is_file()

    done = run_arena_building(["tasks", "gc"], settings)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "removed 1 environment image(s), 1 MB freed" in done.stdout, done.stdout
    assert "kept 1 in use by 1 library" in done.stdout
    with pytest.raises(docker.errors.ImageNotFound):
        docker_client.images.get(gone)
    assert not gone_record.exists()
    assert docker_client.images.get(kept) and kept_record.is_file()
    assert docker_client.images.get(elsewhere)  # no record here: not ours to remove

    again = run_arena_building(["tasks", "gc"], settings)
    assert "removed 0 environment image(s), 0 MB freed" in again.stdout


def test_build_env_with_jobs_estimates_first_then_builds_in_parallel_keeping_the_order(
    docker_client: docker.DockerClient,
    settings: CISettings,
    made: list[str],
    make_repo: MakeRepo,
    images: dict[str, str],
    tmp_path: Path,
) -> None:
    repo, commit = make_repo(PYTHON_FILES)
    tasks = tmp_path / "tasks.jsonl"
    bad = python_pipeline("echo cannot-install-marker; exit 1")
    good = _task("good-1", repo, commit, python_pipeline())
    write_jsonl(
        tasks, [_task("bad-1", repo, commit, bad), good, _task("bad-2", *_other(make_repo))]
    )
    built = run_arena_building(
        ["tasks", "build-env", "--tasks", str(tasks), "--jobs", "3"], settings
    )
    assert built.returncode == 2, built.stdout + built.stderr
    assert "disk estimate (rough) for 3 build(s)" in built.stderr, built.stderr
    assert "free on the engine's disk" in built.stderr
    environments = EnvironmentBuilder(
        ImageBuilder(DockerProvider(settings, docker_client), settings)
    )
    tag = environments.ensure(environment_spec(good))
    names = {"bad-1", "good-1", "bad-2"}
    cells = [line.split() for line in built.stdout.splitlines()]
    order = [words[1] for words in cells if len(words) > 1 and words[1] in names]
    assert order == ["bad-1", "good-1", "bad-2"], built.stdout
    assert tag in built.stdout and "cannot-install-marker" in built.stdout
    assert "cannot-install-either" in built.stdout

    again = run_arena_building(
        ["tasks", "build-env", "--tasks", str(tasks), "--jobs", "2"], settings
    )
    assert "disk estimate: nothing to build" in again.stderr  # built, or failed before

    # as JSON: the failures' whole reasons as plain text (a trial reads them, never a table)
    listed = run_arena_building(
        ["tasks", "build-env", "--tasks", str(tasks), "--only", "bad-1", "--json"], settings
    )
    assert listed.returncode == 2, listed.stdout + listed.stderr
    (row,) = json.loads(listed.stdout)
    assert row["task"] == "bad-1" and row["failed"] and "cannot-install-marker" in row["error"]
    assert "│" not in row["error"]


def _other(make_repo: MakeRepo) -> tuple[str, str, Pipeline]:
    repo, commit = make_repo({**PYTHON_FILES, "README.md": "another\n"})
    return repo, commit, python_pipeline("echo cannot-install-either; exit 1")


def test_library_notes_survive_a_parallel_build(
    settings: CISettings, made: list[str], make_repo: MakeRepo, images: dict[str, str]
) -> None:
    """`--tasks imported` writes each task's environment notes back, as one at a time does."""
    repo, commit = make_repo({**PYTHON_FILES, ".python-version": "3.10\n"})
    write_jsonl(
        library_path(settings.cache_dir), [_task("old-python-1", repo, commit, _SETUP_ONLY)]
    )
    built = run_arena_building(
        ["tasks", "build-env", "--tasks", "imported", "--jobs", "2"], settings
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (line,) = library_path(settings.cache_dir).read_text().splitlines()
    assert json.loads(line)["environment_notes"], line
