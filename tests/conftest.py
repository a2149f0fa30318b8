"""Shared fixtures: a real Docker engine, the CI images, throwaway git repos, a PostgreSQL server."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import docker
import pytest

from arena.tasks.gitrepo import commit_directory
from ci_runner import CIRunner, CISettings
from ci_runner.images import LANGUAGES, ImageBuilder
from ci_runner.providers.docker.engine import connect
from ci_runner.providers.docker.provider import DockerProvider
from ci_runner.providers.docker.sandbox import LABEL
from tests.servers import Postgres, postgres_server

MakeRepo = Callable[[dict[str, str]], tuple[str, str]]


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups set here
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that reaches the engine through `docker_client` (itself or by a fixture it
    uses) is a Docker test whether or not its module says so: `./dev test --fast` leaves
    out every test marked `docker`."""
    for item in items:
        if "docker_client" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.docker)
    _waiting_tests_first(items)
    _compose_beside_the_rest(items)


def _compose_beside_the_rest(items: list[pytest.Item]) -> None:
    """Under `--dist loadgroup` (the Docker half of `./dev test`), the compose stack runs on
    one worker while every other Docker test runs in order on the other: the stack is its own
    project (its containers, networks and volumes, its sandboxes labelled with its own host),
    so the two share only the engine, and its builds and waits overlap the rest (measured:
    47m45 for the Docker half one test at a time, 36m36 so). The real tasks joined it once
    (40m45: the stack then started last), and a test that reads the engine's mount table
    (test_cache_layer) met their sandboxes: it now tells leaks from other processes' layers.
    The load of the stack beside them once turned the rust real-shaped match into a tie: the
    engine reordered a step's stdout and stderr, which broke libtest's lines; a step's log is
    now one stream in the container (ci_runner/providers/docker/sandbox.py)."""
    for item in items:
        if item.get_closest_marker("docker") is None:
            continue
        group = "compose" if item.nodeid.startswith("tests/deploy/") else "engine"
        item.add_marker(pytest.mark.xdist_group(group))


def _waiting_tests_first(items: list[pytest.Item]) -> None:
    """Tests marked `waits` sleep through timeouts for tens of seconds: started first, they
    overlap the rest of a parallel run instead of being its tail (xdist hands each worker a
    run of consecutive tests, so those at the front start at once)."""
    items.sort(key=lambda item: item.get_closest_marker("waits") is None)


@pytest.fixture(scope="session")
def docker_client() -> docker.DockerClient:
    return connect()


@pytest.fixture(scope="session")
def ci_settings(tmp_path_factory: pytest.TempPathFactory) -> CISettings:
    return CISettings(cache_dir=tmp_path_factory.mktemp("arena-cache"))


@pytest.fixture(scope="session")
def images(docker_client: docker.DockerClient, ci_settings: CISettings) -> dict[str, str]:
    builder = ImageBuilder(DockerProvider(ci_settings, docker_client), ci_settings)
    return {language: builder.ensure(language) for language in LANGUAGES}


@pytest.fixture(scope="session")
def runner(docker_client: docker.DockerClient, ci_settings: CISettings) -> CIRunner:
    return CIRunner(ci_settings, DockerProvider(ci_settings, docker_client))


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    """One throwaway server for the session (for each parallel worker's session)."""
    with postgres_server() as server:
        yield server


@pytest.fixture
def database_url(postgres: Postgres) -> Iterator[str]:
    """A fresh database for each test, holding the schema (what every store test starts from)."""
    url = postgres.new_database()
    yield url
    postgres.drop_database(url)


@pytest.fixture
def empty_database_url(postgres: Postgres) -> Iterator[str]:
    """A fresh database without the schema, for the migrations themselves."""
    url = postgres.new_database(migrated=False)
    yield url
    postgres.drop_database(url)


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
        for c in client.containers.list(
            ignore_removed=True, all=True, filters={"label": f"{LABEL}.pid={os.getpid()}"}
        )
    ]


@pytest.fixture
def no_containers_left(docker_client: docker.DockerClient) -> Iterator[None]:
    """Fails the test if a sandbox container of this process outlives it."""
    before = set(our_containers(docker_client))
    yield
    left = set(our_containers(docker_client)) - before
    assert not left, f"sandbox containers left behind: {sorted(left)}"


class ContainerCreations:
    """Containers created, under `label`, while it watches.

    Counted from the engine's live event stream: its stored history holds only its last 256
    events, which a busy engine (tests, builds and other sessions sharing it) overwrites in
    seconds, so a count read back afterwards can miss what happened.
    """

    _SETTLE_S = 0.5  # events of the last moment reach the stream after the call returns

    def __init__(self, client: docker.DockerClient, label: str) -> None:
        self._client = client
        self._label = label
        self.count = 0
        self._stream: Any = None
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        with contextlib.suppress(Exception):  # the stream breaks when it is closed
            for _ in self._stream:
                self.count += 1

    def __enter__(self) -> ContainerCreations:
        self._stream = self._client.events(
            since=time.time(),  # replays what came before the stream was up, then follows
            filters={"type": "container", "event": "create", "label": self._label},
            decode=True,
        )
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        time.sleep(self._SETTLE_S)
        self._stream.close()
        self._thread.join(5)


def sandboxes_created(client: docker.DockerClient) -> ContainerCreations:
    """Sandboxes this process creates (others share the engine and create their own)."""
    return ContainerCreations(client, f"{LABEL}.pid={os.getpid()}")
