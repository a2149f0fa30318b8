"""Shared fixtures: a real Docker engine, the CI images, throwaway git repos."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import docker
import pytest

from arena.tasks.gitrepo import commit_directory
from ci_runner import CIRunner, CISettings
from ci_runner.engine import connect
from ci_runner.images import LANGUAGES, ImageBuilder
from ci_runner.sandbox.docker import LABEL

MakeRepo = Callable[[dict[str, str]], tuple[str, str]]


@pytest.fixture(scope="session")
def docker_client() -> docker.DockerClient:
    return connect()


@pytest.fixture(scope="session")
def ci_settings(tmp_path_factory: pytest.TempPathFactory) -> CISettings:
    return CISettings(cache_dir=tmp_path_factory.mktemp("arena-cache"))


@pytest.fixture(scope="session")
def images(docker_client: docker.DockerClient, ci_settings: CISettings) -> dict[str, str]:
    builder = ImageBuilder(docker_client, ci_settings)
    return {language: builder.ensure(language) for language in LANGUAGES}


@pytest.fixture(scope="session")
def runner(docker_client: docker.DockerClient, ci_settings: CISettings) -> CIRunner:
    return CIRunner(ci_settings, docker_client)


def write_tree(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if text.startswith("symlink:"):
            path.symlink_to(text.removeprefix("symlink:"))
        else:
            path.write_text(text)


@pytest.fixture
def make_repo(tmp_path: Path) -> MakeRepo:
    """Build a git repo (pygit2) holding `files`; returns its path and commit."""
    counter = iter(range(1_000))

    def make(files: dict[str, str]) -> tuple[str, str]:
        n = next(counter)
        source = tmp_path / f"src-{n}"
        write_tree(source, files)
        repo = tmp_path / f"repo-{n}.git"
        return str(repo), commit_directory(source, repo)

    return make


def our_containers(client: docker.DockerClient) -> list[str]:
    return [
        c.name
        for c in client.containers.list(all=True, filters={"label": f"{LABEL}.pid={os.getpid()}"})
    ]


@pytest.fixture
def no_containers_left(docker_client: docker.DockerClient) -> Iterator[None]:
    """Fails the test if a sandbox container of this process outlives it."""
    before = set(our_containers(docker_client))
    yield
    left = set(our_containers(docker_client)) - before
    assert not left, f"sandbox containers left behind: {sorted(left)}"


def containers_created_since(client: docker.DockerClient, since: float) -> int:
    """Sandboxes this process created (others share the engine and create their own)."""
    events = client.events(
        since=since,
        until=int(time.time()) + 1,
        filters={
            "type": "container",
            "event": "create",
            "label": f"{LABEL}.pid={os.getpid()}",
        },
        decode=True,
    )
    try:
        return sum(1 for _ in events)
    finally:
        events.close()
