"""A health check's probe of the provider's engine: a reason in bounded time, never a raise."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import docker
import pytest

from arena.engine_status import engine_check
from ci_runner import CISettings
from ci_runner.providers import provider_for


def _settings(tmp_path: Path) -> CISettings:
    return CISettings(cache_dir=tmp_path, sandbox_provider="docker")


def test_an_engine_that_takes_the_connection_and_never_answers_is_reported_in_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        monkeypatch.setenv("DOCKER_HOST", f"tcp://127.0.0.1:{silent.getsockname()[1]}")
        started = time.monotonic()
        why = provider_for(_settings(tmp_path)).unreachable(1)
        took = time.monotonic() - started
    assert why is not None and why.startswith("no Docker engine answers ("), why
    assert "Read timed out" in why and why.endswith("start one (dockerd) or set DOCKER_HOST")
    assert took < 4, took  # the probe's 1 s, not the 120 s builds and runs are given


def test_the_health_check_says_why_when_no_engine_listens(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with socket.socket() as taken:  # a port nothing listens on
        taken.bind(("127.0.0.1", 0))
        monkeypatch.setenv("DOCKER_HOST", f"tcp://127.0.0.1:{taken.getsockname()[1]}")
        found = engine_check(_settings(tmp_path))
    assert found["ok"] is False
    assert found["reason"].startswith("no Docker engine answers ("), found
    assert "Connection refused" in found["reason"], found


def test_the_engine_the_tests_use_answers_the_probe(
    docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    assert engine_check(_settings(tmp_path)) == {"ok": True, "reason": None}
