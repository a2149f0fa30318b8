"""Hostile code in the sandbox: each attempt is contained and reported, the host unaffected."""

from __future__ import annotations

import ipaddress
import os
import socket
import subprocess
import threading

import docker
import pytest

from ci_runner import CIRequest, CIRunner, CIStatus, Limits, Pipeline
from tests.conftest import MakeRepo

pytestmark = pytest.mark.usefixtures("no_containers_left")

FILES = {"README.md": "hostile\n"}


def _run(
    runner: CIRunner,
    images: dict[str, str],
    make_repo: MakeRepo,
    steps: list[dict[str, object]],
    limits: Limits | None = None,
    report: dict[str, str] | None = None,
) -> object:
    repo, commit = make_repo(FILES)
    pipeline = Pipeline.model_validate(
        {"steps": steps, "report": report or {"format": "junit", "path": "report.xml"}}
    )
    return runner.run(
        CIRequest(
            repo=repo, commit=commit, pipeline=pipeline, image=images["python"], limits=limits
        )
    )


def _bridge_gateway(client: docker.DockerClient) -> str:
    """The host's own address on the Docker bridge, where bridged containers would reach it."""
    config = client.networks.get("bridge").attrs["IPAM"]["Config"][0]
    return str(config.get("Gateway") or ipaddress.ip_network(config["Subnet"])[1])


def test_network_connections_are_impossible(
    runner: CIRunner,
    images: dict[str, str],
    make_repo: MakeRepo,
    docker_client: docker.DockerClient,
) -> None:
    gateway = _bridge_gateway(docker_client)
    listener = socket.create_server((gateway, 0))
    port = listener.getsockname()[1]
    listener.settimeout(0.2)
    accepted: list[object] = []

    def accept() -> None:
        for _ in range(100):
            try:
                accepted.append(listener.accept())
            except TimeoutError:
                continue
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    probe = (
        "import socket\n"
        f"for host in ({gateway!r}, '127.0.0.1'):\n"
        "    try:\n"
        f"        socket.create_connection((host, {port}), timeout=3)\n"
        "        print('CONNECTED', host)\n"
        "    except OSError as exc:\n"
        "        print('BLOCKED', host, type(exc).__name__)\n"
        "try:\n"
        "    socket.getaddrinfo('pypi.org', 443)\n"
        "    print('RESOLVED')\n"
        "except OSError:\n"
        "    print('NO DNS')\n"
        "print(open('/proc/net/dev').read())\n"
    )
    try:
        result = _run(
            runner, images, make_repo, [{"name": "net", "run": f"python3 - <<'EOF'\n{probe}EOF"}]
        )
    finally:
        listener.close()
        thread.join(5)
    log = result.steps[0].log  # type: ignore[attr-defined]
    assert f"BLOCKED {gateway}" in log and "BLOCKED 127.0.0.1" in log, log
    assert "CONNECTED" not in log and "RESOLVED" not in log and "NO DNS" in log
    interfaces = [
        line.split(":")[0].strip() for line in log.splitlines() if ":" in line and "|" not in line
    ]
    assert [i for i in interfaces if i and not i.startswith(("BLOCKED", "NO"))] == ["lo"], log
    assert accepted == []


def test_fork_bomb_is_held_by_the_pids_limit(
    runner: CIRunner, images: dict[str, str], make_repo: MakeRepo
) -> None:
    # after lighting the bomb, only builtins: forking is what the bomb makes impossible
    bomb = (
        "bomb() { bomb | bomb & }; bomb; SECONDS=0; while [ $SECONDS -lt 4 ]; do :; done; "
        "procs=(/proc/[0-9]*); echo PROCS=${#procs[@]}"
    )
    result = _run(
        runner, images, make_repo, [{"name": "bomb", "run": bomb, "timeout_s": 30}], Limits(pids=64)
    )
    log = result.steps[0].log  # type: ignore[attr-defined]
    assert result.status in (CIStatus.FAILED, CIStatus.ERROR, CIStatus.TIMEOUT)  # type: ignore[attr-defined]
    procs = int(log.split("PROCS=")[1].split()[0])
    assert 16 < procs <= 64 + 2  # the bomb ran, and the limit held it
    assert subprocess.run(["true"], check=False).returncode == 0  # the host can still fork


def test_memory_hog_is_killed_and_reported_as_such(
    runner: CIRunner, images: dict[str, str], make_repo: MakeRepo
) -> None:
    hog = "python3 -c 'blocks = [bytearray(64 * 1024 * 1024) for _ in range(64)]'"
    # the container may hold memory_mb + disk_mb: the workspace's files live in memory
    limits = Limits(memory_mb=128, disk_mb=64)
    result = _run(runner, images, make_repo, [{"name": "hog", "run": hog}], limits)
    step = result.steps[0]  # type: ignore[attr-defined]
    assert step.oom_killed
    assert result.status is CIStatus.FAILED  # type: ignore[attr-defined]
    assert "memory limit of 128 MiB exceeded" in result.error  # type: ignore[attr-defined]


def test_infinite_loop_times_out(
    runner: CIRunner, images: dict[str, str], make_repo: MakeRepo
) -> None:
    result = _run(
        runner,
        images,
        make_repo,
        [
            {"name": "spin", "run": "while true; do :; done", "timeout_s": 2},
            {"name": "after", "run": "true"},
        ],
    )
    assert result.status is CIStatus.TIMEOUT  # type: ignore[attr-defined]
    spin, after = result.steps  # type: ignore[attr-defined]
    assert spin.timed_out and 2 <= spin.duration_s < 15
    assert after.skipped
    assert "timed out" in result.error  # type: ignore[attr-defined]


def test_whole_run_timeout_kills_across_steps(
    runner: CIRunner, images: dict[str, str], make_repo: MakeRepo
) -> None:
    steps = [{"name": f"nap{i}", "run": "sleep 2"} for i in range(5)]
    result = _run(runner, images, make_repo, steps, Limits(run_timeout_s=5))
    assert result.status is CIStatus.TIMEOUT  # type: ignore[attr-defined]
    assert result.duration_s < 20  # type: ignore[attr-defined]
    assert result.steps[-1].skipped  # type: ignore[attr-defined]


def test_writes_outside_the_workspace_are_refused(
    runner: CIRunner, images: dict[str, str], make_repo: MakeRepo, tmp_path: object
) -> None:
    targets = ["/evil", "/usr/evil", "/etc/passwd", "/workspace/../evil", "/var/tmp/evil"]
    script = "; ".join(
        f"(echo x >> {t}) 2>/dev/null && echo WROTE:{t} || echo DENIED:{t}" for t in targets
    )
    script += "; echo ok > /workspace/inside && echo WROTE-INSIDE; id -u"
    result = _run(runner, images, make_repo, [{"name": "write", "run": script}])
    log = result.steps[0].log  # type: ignore[attr-defined]
    for target in targets:
        assert f"DENIED:{target}" in log, log
    assert "WROTE-INSIDE" in log
    assert log.strip().splitlines()[-1] != "0"  # not root
    assert not os.path.exists("/evil") and not os.path.exists("/usr/evil")


def test_output_flood_is_truncated(
    runner: CIRunner, images: dict[str, str], make_repo: MakeRepo
) -> None:
    flood = "head -c 50000000 /dev/zero | tr '\\0' x"
    result = _run(runner, images, make_repo, [{"name": "flood", "run": flood}])
    step = result.steps[0]  # type: ignore[attr-defined]
    assert step.truncated
    assert 1024 * 1024 <= len(step.log.encode()) < 1024 * 1024 + 200
    assert "output truncated" in step.log


def test_host_environment_does_not_leak_in(
    runner: CIRunner, images: dict[str, str], make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_TEST_SECRET_TOKEN", "s3cr3t-do-not-leak")
    result = _run(
        runner,
        images,
        make_repo,
        [{"name": "env", "run": "env; cat /proc/1/environ | tr '\\0' '\\n'"}],
    )
    log = result.steps[0].log  # type: ignore[attr-defined]
    assert "HOME=/home/arena" in log
    assert "s3cr3t-do-not-leak" not in log and "ARENA_TEST_SECRET_TOKEN" not in log


def test_report_symlink_to_a_host_file_is_not_followed(
    runner: CIRunner, images: dict[str, str], make_repo: MakeRepo
) -> None:
    result = _run(
        runner, images, make_repo, [{"name": "plant", "run": "ln -s /etc/shadow report.xml"}]
    )
    assert result.status is CIStatus.ERROR  # type: ignore[attr-defined]
    assert "not a regular file" in result.error  # type: ignore[attr-defined]
    assert result.tests == {}  # type: ignore[attr-defined]
