"""What every sandbox provider must do; each provider runs this whole module.

Like inspect_ai's sandbox self-check: one suite, parametrized over the providers of the
registry (ci_runner.providers.PROVIDERS): a provider added there runs it with no change
here. Docker runs once more through a second engine address (a unix-socket forwarder
started and stopped here), as a CI worker in a container talking to the host's engine would.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from ci_runner import CISettings, Limits, SandboxError
from ci_runner.image_layout import WORKSPACE
from ci_runner.providers import PROVIDERS, provider_for
from ci_runner.providers.docker.sandbox import DockerSandbox
from ci_runner.sandbox import (
    Sandbox,
    SandboxDied,
    SandboxFileError,
    SandboxLost,
    StopCause,
)


class UnixForwarder:
    """A second address of the same engine: a unix socket that forwards every connection."""

    def __init__(self, listen: Path, target: str) -> None:
        self._target = target
        self.connections = 0
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(listen))
        self._server.listen(16)
        self._open: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(self._target)
            self.connections += 1
            self._open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
            sink.shutdown(socket.SHUT_WR)  # half-close: an exec's stdin reaches its end
        except OSError:
            pass

    def close(self) -> None:
        self._server.close()
        for sock in self._open:
            sock.close()
        self._thread.join(5)


def _engine_socket() -> str | None:
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    return host.removeprefix("unix://") if host.startswith("unix://") else None


SECOND_ADDRESS = "docker-second-address"


@pytest.fixture(params=[*sorted(PROVIDERS), SECOND_ADDRESS])
def sandbox(
    request: pytest.FixtureRequest,
    docker_client: docker.DockerClient,
    ci_settings: CISettings,
    images: dict[str, str],
    tmp_path: Path,
) -> Iterator[Sandbox]:
    forwarder = None
    client = docker_client
    name = str(request.param)
    if name == SECOND_ADDRESS:
        target = _engine_socket()
        if target is None:
            pytest.skip("the engine is not on a unix socket")
        forwarder = UnixForwarder(tmp_path / "engine.sock", target)
        client = docker.DockerClient(base_url=f"unix://{tmp_path / 'engine.sock'}")
        name = "docker"
    provider = provider_for(ci_settings.model_copy(update={"sandbox_provider": name}), client)
    try:
        with provider.start(images["python"], Limits(disk_mb=64)) as started:
            yield started
        if forwarder is not None:
            assert forwarder.connections > 0  # the engine was only reached through it
    finally:
        if forwarder is not None:
            client.close()
            forwarder.close()


def _sh(sandbox: Sandbox, command: str, timeout_s: float = 30) -> tuple[int | None, str]:
    done = sandbox.exec(
        command, env={}, workdir=WORKSPACE, timeout_s=timeout_s, max_output_bytes=64 * 1024
    )
    return done.exit_code, done.output


def test_exec_reports_output_and_exit_code_with_pipefail(sandbox: Sandbox) -> None:
    assert _sh(sandbox, "echo hi; id -u") == (
        0,
        f"hi\n{1000 if os.geteuid() == 0 else os.geteuid()}\n",
    )
    assert _sh(sandbox, "false | true; echo never")[0] == 1


def test_stdout_and_stderr_are_one_log_in_the_order_written(sandbox: Sandbox) -> None:
    # a test runner's pattern: a result line written in two parts on stdout, then the next
    # binary announced on stderr (libtest under cargo); the report is read from this log
    script = 'for i in $(seq 300); do printf "test t$i ... "; printf "ok\\n"; echo "Running $i" >&2; done'
    expected = "".join(f"test t{i} ... ok\nRunning {i}\n" for i in range(1, 301))
    assert _sh(sandbox, script) == (0, expected)


def test_write_tree_copies_files_and_no_host_path_is_mounted(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    source = tmp_path / "tree"
    (source / "sub").mkdir(parents=True)
    (source / "sub" / "run.sh").write_text("#!/bin/sh\necho ran\n")
    (source / "sub" / "run.sh").chmod(0o755)
    sandbox.write_tree(source, WORKSPACE)
    (source / "late.txt").write_text("written on the host afterwards\n")
    code, output = _sh(
        sandbox, "sub/run.sh; touch mine; ls; awk '$2 == \"/workspace\"' /proc/mounts"
    )
    assert code == 0 and output.startswith("ran\n"), output
    assert "late.txt" not in output  # a copy, not a view of the host
    assert output.strip().splitlines()[-1].startswith("tmpfs /workspace tmpfs"), output


def test_write_file_and_read_file_round_trip(sandbox: Sandbox) -> None:
    sandbox.write_file(f"{WORKSPACE}/deep/er/data.bin", bytes(range(256)))
    assert sandbox.read_file(f"{WORKSPACE}/deep/er/data.bin", 256) == bytes(range(256))


def test_write_files_writes_several_files_at_once_as_newly_changed(sandbox: Sandbox) -> None:
    """One round trip; existing files replaced, missing folders made, each file stamped now
    (a build tool must see it as changed, as cargo does by mtime), owned by the user."""
    assert (
        _sh(sandbox, "mkdir -p src && echo old > src/lib.rs && touch -d 2001-01-01 src/lib.rs")[0]
        == 0
    )
    sandbox.write_files(WORKSPACE, {"src/lib.rs": b"new\n", "tests/deep/t.py": b"x = 1\n"})
    code, output = _sh(
        sandbox, "cat src/lib.rs; find src/lib.rs -newermt '-1 hour'; test -O tests/deep/t.py"
    )
    assert code == 0 and output == "new\nsrc/lib.rs\n", output
    assert sandbox.read_file(f"{WORKSPACE}/tests/deep/t.py", 64) == b"x = 1\n"
    with pytest.raises(ValueError, match="not a path inside"):
        sandbox.write_files(WORKSPACE, {"../etc/x": b""})


@pytest.mark.parametrize(
    ("plant", "message"),
    [
        ("true", "no file at"),
        ("mkdir report", "not a regular file"),
        ("mkfifo report", "not a regular file"),
        ("ln -s /etc/passwd report", "not a regular file"),
        ("mkdir real; echo x > real/f; ln -s real report", "not a regular file"),
        ("head -c 5000 /dev/zero > report", "5000 bytes, over 4096"),
    ],
)
def test_read_file_refuses_what_is_not_a_small_regular_file(
    sandbox: Sandbox, plant: str, message: str
) -> None:
    assert _sh(sandbox, plant)[0] == 0
    path = f"{WORKSPACE}/report/f" if "real/f" in plant else f"{WORKSPACE}/report"
    with pytest.raises(SandboxFileError, match=message):
        sandbox.read_file(path, 4096)


def test_each_exec_starts_with_no_process_of_an_earlier_one(sandbox: Sandbox) -> None:
    assert _sh(sandbox, "nohup sleep 300 >/dev/null 2>&1 & echo started")[0] == 0
    code, output = _sh(sandbox, "ps -u $(id -u) -o comm=")
    assert code == 0 and "sleep" not in output, output


def test_the_sandbox_survives_its_user_killing_everything(sandbox: Sandbox) -> None:
    _sh(sandbox, "kill -9 -1 1 || true")
    assert _sh(sandbox, "echo alive") == (0, "alive\n")


def test_a_timeout_kills_the_sandbox(sandbox: Sandbox) -> None:
    done = sandbox.exec("sleep 60", env={}, workdir=WORKSPACE, timeout_s=1, max_output_bytes=1024)
    assert done.timed_out and done.exit_code is None
    with pytest.raises(SandboxDied):
        _sh(sandbox, "true")


def _stop_from_outside(sandbox: Sandbox, after_s: float) -> threading.Thread:
    """Stop the sandbox the way an operator or the engine would, from outside it."""
    assert isinstance(sandbox, DockerSandbox)
    client = docker.from_env()

    def kill() -> None:
        time.sleep(after_s)
        client.api.kill(sandbox.container_id)
        client.close()

    thread = threading.Thread(target=kill, daemon=True)
    thread.start()
    return thread


@pytest.mark.docker
def test_a_stop_from_outside_is_an_infrastructure_fault(sandbox: Sandbox) -> None:
    stopper = _stop_from_outside(sandbox, 1.0)
    with pytest.raises(SandboxLost) as lost:
        _sh(sandbox, "sleep 20")
    stopper.join(10)
    assert isinstance(lost.value, SandboxError) and lost.value.cause is StopCause.OUTSIDE
    with pytest.raises(SandboxLost):  # and it stays lost, for steps and reads alike
        _sh(sandbox, "true")
    with pytest.raises(SandboxLost):
        sandbox.read_file(f"{WORKSPACE}/report.xml", 4096)
    assert sandbox.stopped_by is None  # nothing of its own stopped it


@pytest.mark.docker
def test_its_own_processes_killing_the_runners_are_the_codes_fault(sandbox: Sandbox) -> None:
    killer = "nohup bash -c 'while :; do kill -9 -1 2>/dev/null; done' >/dev/null 2>&1 &"
    done = sandbox.exec(
        f"{killer} sleep 2", env={}, workdir=WORKSPACE, timeout_s=30, max_output_bytes=4096
    )
    assert done.exit_code == 137 and done.stopped_by is StopCause.OWN_PROCESSES, done
    assert not done.sandbox_died and sandbox.stopped_by is StopCause.OWN_PROCESSES
    for _ in range(3):  # whoever wins each race, it is never the infrastructure's fault
        try:
            sandbox.read_file(f"{WORKSPACE}/report.xml", 4096)
        except SandboxFileError as exc:
            assert exc.stopped_by in (None, StopCause.OWN_PROCESSES), exc
        again = _sh(sandbox, "echo again")
        assert again in ((0, "again\n"), (137, "")), again


def test_writes_past_the_disk_limit_fail_with_enospc(sandbox: Sandbox) -> None:
    code, output = _sh(sandbox, "head -c 100000000 /dev/zero > big")
    assert code != 0 and "No space left on device" in output
