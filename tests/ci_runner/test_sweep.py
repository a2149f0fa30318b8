"""Orphaned sandboxes and run directories (their owner died) are swept; live ones left alone."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from pathlib import Path

import docker
import pytest

from ci_runner import CISettings, Limits
from ci_runner.errors import CIError
from ci_runner.providers import provider_for
from ci_runner.providers.docker.sandbox import LABEL, DockerSandbox, sweep_orphans
from ci_runner.workspace import sweep_run_dirs


def _existing(
    client: docker.DockerClient, *containers: docker.models.containers.Container
) -> set[str]:
    """Which of these containers still exist. A sweep's own list of what it removed is no
    evidence: a sweep of a test running beside this one may have removed an orphan first
    (CI saw that)."""
    names = {c.name for c in client.containers.list(ignore_removed=True, all=True)}
    return {c.name for c in containers if c.name in names}


def _remove(container: docker.models.containers.Container) -> None:
    """Remove a test's container, gone or going already: a sweep of a test running beside
    this one may be removing it (CI saw "removal ... is already in progress")."""
    try:
        container.remove(force=True)
    except docker.errors.NotFound:
        return
    except docker.errors.APIError as exc:
        if exc.status_code != 409:
            raise


def test_sweep_removes_containers_whose_owner_is_gone(
    docker_client: docker.DockerClient, images: dict[str, str]
) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    labels = {
        LABEL: "1",
        f"{LABEL}.host": socket.gethostname(),
        f"{LABEL}.pid": str(dead.pid),
        f"{LABEL}.started": "0",
    }
    orphan = docker_client.containers.create(
        images["python"], ["sleep", "60"], labels=labels, network_mode="none"
    )
    live = docker_client.containers.create(
        images["python"],
        ["sleep", "60"],
        network_mode="none",
        labels={**labels, f"{LABEL}.pid": "1"},
    )
    try:
        removed = sweep_orphans(docker_client)
        assert live.name not in removed
        assert _existing(docker_client, orphan, live) == {live.name}
    finally:
        for container in (orphan, live):
            _remove(container)


def test_sweep_removes_cache_layer_volumes_whose_owner_is_gone(
    docker_client: docker.DockerClient,
) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    labels = {
        LABEL: "1",
        f"{LABEL}.host": socket.gethostname(),
        f"{LABEL}.pid": str(dead.pid),
        f"{LABEL}.started": "0",
    }
    api = docker_client.api
    orphan = api.create_volume(f"arena-ci-test-{dead.pid}-upper", labels=labels)["Name"]
    live = api.create_volume(
        f"arena-ci-test-{os.getpid()}-upper", labels={**labels, f"{LABEL}.pid": "1"}
    )["Name"]
    try:
        removed = sweep_orphans(docker_client)
        assert live not in removed  # the orphan may have gone in a sweep running beside
        names = {v["Name"] for v in api.volumes(filters={"label": LABEL})["Volumes"] or []}
        assert orphan not in names and live in names
    finally:
        for volume in (orphan, live):
            with contextlib.suppress(docker.errors.NotFound):
                api.remove_volume(volume)


def test_sweep_removes_run_directories_whose_owner_is_gone(tmp_path: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    runs = tmp_path / "runs"
    orphan = runs / f"run-{dead.pid}-abc"
    live = runs / f"run-{os.getpid()}-def"
    for run in (orphan, live):
        (run / "deep" / "er").mkdir(parents=True)
        (run / "deep" / "er" / "file").write_text("x")
    (orphan / "deep").chmod(0)  # left unreadable by the code under test
    assert sweep_run_dirs(runs) == [orphan]
    assert not orphan.exists() and live.exists()
    assert sweep_run_dirs(runs, max_age_s=-1) == [live]  # older than "any age" goes too


def test_an_unknown_sandbox_provider_is_named_with_the_known_ones(tmp_path: Path) -> None:
    settings = CISettings(cache_dir=tmp_path, sandbox_provider="kubernetes")
    with pytest.raises(CIError, match=r"unknown sandbox provider 'kubernetes' .*known: docker"):
        provider_for(settings)


def test_sweep_removes_sandboxes_of_a_crashed_worker_container_and_past_their_deadline(
    docker_client: docker.DockerClient, images: dict[str, str]
) -> None:
    """A CI worker container that died mid-run left its sandboxes up (its pid means nothing
    to a sweep outside it): they name the container, and go once it is not running; and any
    sandbox past its deadline goes, whoever owns it."""
    alive = {LABEL: "1", f"{LABEL}.host": socket.gethostname(), f"{LABEL}.pid": "1"}
    worker = docker_client.containers.run(
        images["python"], ["sleep", "60"], detach=True, network_mode="none"
    )
    crashed = docker_client.containers.create(images["python"], ["true"], network_mode="none")
    made = {
        "of the crashed worker": {**alive, f"{LABEL}.container": str(crashed.id)},
        "past its deadline": {**alive, f"{LABEL}.deadline": "1000"},
        "of a running worker": {**alive, f"{LABEL}.container": str(worker.id)},
        "within its deadline": {**alive, f"{LABEL}.deadline": "99999999999"},
    }
    sandboxes = {
        what: docker_client.containers.create(
            images["python"], ["sleep", "60"], labels=labels, network_mode="none"
        )
        for what, labels in made.items()
    }
    try:
        sweep_orphans(docker_client)
        left = _existing(docker_client, *sandboxes.values())
        gone = {what for what, box in sandboxes.items() if box.name not in left}
        assert gone == {"of the crashed worker", "past its deadline"}
    finally:
        for container in (worker, crashed, *sandboxes.values()):
            _remove(container)


def test_sweep_removes_what_a_restarted_worker_container_started_before_its_restart(
    docker_client: docker.DockerClient, images: dict[str, str]
) -> None:
    """Compose restarts a killed CI worker as the same container: the sandboxes it started
    before go (nothing in it knows them any more), even one started a moment before the
    kill; those it started since stay. A sandbox names its owner's start as the engine
    says it, so no clock is compared."""
    worker = docker_client.containers.run(
        images["python"], ["sleep", "120"], detach=True, network_mode="none"
    )
    made: dict[str, docker.models.containers.Container] = {}

    def sandbox_of_the_worker() -> docker.models.containers.Container:
        worker.reload()
        started = str(worker.attrs["State"]["StartedAt"])
        owned = {
            LABEL: "1",
            f"{LABEL}.host": "elsewhere",
            f"{LABEL}.started": str(int(time.time())),
            f"{LABEL}.container": str(worker.id),
            f"{LABEL}.container-started": started,
        }
        return docker_client.containers.create(
            images["python"], ["sleep", "60"], network_mode="none", labels=owned
        )

    try:
        made["before"] = sandbox_of_the_worker()
        worker.restart(timeout=0)  # at once: within a second of the sandbox's start
        made["since"] = sandbox_of_the_worker()
        sweep_orphans(docker_client)
        left = _existing(docker_client, *made.values())
        assert {what for what, box in made.items() if box.name not in left} == {"before"}
    finally:
        for container in (worker, *made.values()):
            _remove(container)


def test_every_sandbox_carries_its_deadline(
    docker_client: docker.DockerClient, images: dict[str, str]
) -> None:
    box = DockerSandbox.start(docker_client, images["python"], Limits(run_timeout_s=30))
    try:
        labels = docker_client.containers.get(box.container_id).labels
        deadline = float(labels[f"{LABEL}.deadline"]) - time.time()
        assert 30 + 120 < deadline <= 30 + 120 + 120 + 5  # its keep-alive's time, and a grace
    finally:
        box.close()
