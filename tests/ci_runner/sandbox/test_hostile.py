"""Hostile code in the sandbox: each attempt is contained and reported, the host unaffected."""

from __future__ import annotations

import ipaddress
import os
import socket
import subprocess
import threading
from pathlib import Path

import docker
import pygit2
import pytest

from ci_runner import CIRequest, CIRunner, CIStatus, Limits, Pipeline
from ci_runner.providers.docker.sandbox import (
    SANDBOX_CPU_SHARES,
    DockerSandbox,
    engine_cpus,
    sandbox_cpus,
)
from ci_runner.workspace import remove_tree
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


def _add_later_commit(repo_path: str, base: str, files: dict[str, str]) -> str:
    """A commit after `base` on the repo's branch (the upstream fix the sandbox must not see)."""
    repo = pygit2.Repository(repo_path)
    builder = repo.TreeBuilder(repo[base].peel(pygit2.Commit).tree)
    for name, text in files.items():
        builder.insert(name, repo.create_blob(text.encode()), pygit2.enums.FileMode.BLOB)
    signature = pygit2.Signature("Upstream", "up@arena.invalid", 1_800_000_000, 0)
    branch = repo.head.name
    oid = repo.create_commit(branch, signature, signature, "the fix", builder.write(), [base])
    repo.create_tag("v2", oid, pygit2.enums.ObjectType.COMMIT, signature, "release")
    return str(oid)


def test_checkout_holds_no_future_commit_ref_or_object(
    runner: CIRunner, images: dict[str, str], make_repo: MakeRepo
) -> None:
    repo, base = make_repo(FILES)
    runner._workspaces.mirror(repo, base)  # the mirror exists before the fix lands
    future = _add_later_commit(repo, base, {"FIX.txt": "the-upstream-fix\n"})
    runner._workspaces.mirror(repo, future)  # ... and then holds it, as after another task
    probe = (
        "git log --all --oneline | wc -l; git for-each-ref; "
        f"git cat-file -e {future} && echo FUTURE-OBJECT; "
        "git log --all -p | grep -c the-upstream-fix || true; "
        "grep -r the-upstream-fix .git && echo FUTURE-BYTES || true"
    )
    pipeline = Pipeline.model_validate(
        {"steps": [{"name": "peek", "run": probe}], "report": {"format": "junit", "path": "r.xml"}}
    )
    result = runner.run(
        CIRequest(repo=repo, commit=base, pipeline=pipeline, image=images["python"])
    )
    log = result.steps[0].log
    assert log.split() == ["1", "0"], log  # one commit, no ref, no trace of the fix


def test_sandbox_cannot_poison_the_mirror(
    runner: CIRunner, images: dict[str, str], make_repo: MakeRepo
) -> None:
    vandal = (
        "chmod -R u+w .git; find .git/objects -type f | while read -r f; do echo junk > $f; done"
    )
    repo, commit = make_repo(FILES)
    pipeline = Pipeline.model_validate(
        {"steps": [{"name": "vandal", "run": vandal}], "report": {"format": "junit", "path": "r"}}
    )
    request = CIRequest(repo=repo, commit=commit, pipeline=pipeline, image=images["python"])
    runner.run(request)
    mirror = pygit2.Repository(str(runner._workspaces.mirror_path(repo)))
    assert mirror[commit].peel(pygit2.Commit).tree is not None  # still readable
    again = runner.run(
        request.model_copy(
            update={
                "pipeline": Pipeline.model_validate(
                    {
                        "steps": [{"name": "ok", "run": "git cat-file -e HEAD && echo INTACT"}],
                        "report": {"format": "junit", "path": "r"},
                    }
                )
            }
        )
    )
    assert "INTACT" in again.steps[0].log


def test_workspace_is_capped_by_disk_mb_and_mounted_nosuid_nodev(
    runner: CIRunner, images: dict[str, str], make_repo: MakeRepo
) -> None:
    script = (
        "grep ' /workspace ' /proc/mounts; "
        "head -c 200000000 /dev/zero > big || echo WRITE-FAILED; du -sm big"
    )
    result = _run(runner, images, make_repo, [{"name": "fill", "run": script}], Limits(disk_mb=64))
    log = result.steps[0].log  # type: ignore[attr-defined]
    mount = next(line for line in log.splitlines() if " /workspace " in line)
    assert "nosuid" in mount and "nodev" in mount, mount
    assert "No space left on device" in log and "WRITE-FAILED" in log, log
    assert int(log.split()[-2]) <= 64


def test_a_1500_level_tree_does_not_lose_the_result(
    runner: CIRunner, images: dict[str, str], make_repo: MakeRepo
) -> None:
    deep = (
        "python3 -c \"import os\nfor _ in range(1500): os.mkdir('d'); os.chdir('d')\n"
        "os.chmod('.', 0)\""
    )
    result = _run(runner, images, make_repo, [{"name": "deep", "run": deep}])
    assert result.steps[0].exit_code == 0  # type: ignore[attr-defined]
    assert result.status is CIStatus.ERROR  # type: ignore[attr-defined]  # no report, clean steps
    assert list(runner._workspaces._runs_dir.glob(f"run-{os.getpid()}-*")) == []


def test_remove_tree_handles_any_depth_and_permissions(tmp_path: Path) -> None:
    root = tmp_path / "run-x"
    root.mkdir()
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for level in range(1500):  # 1,500 levels of 100 characters: far past PATH_MAX
            name = "d" * 100
            os.mkdir(name, dir_fd=fd)
            below = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            if level % 300 == 299:
                os.fchmod(fd, 0o500)  # a parent left unwritable
            os.close(fd)
            fd = below
        with open(os.open("file", os.O_WRONLY | os.O_CREAT, 0o000, dir_fd=fd), "w") as handle:
            handle.write("x")
        os.fchmod(fd, 0)
    finally:
        os.close(fd)
    remove_tree(root)
    assert not root.exists()


def test_atexit_hook_rewriting_the_report_cannot_turn_a_failure_into_a_pass(
    runner: CIRunner, images: dict[str, str], make_repo: MakeRepo
) -> None:
    conftest = (
        "import atexit, os\n"
        "def _forge():\n"
        "    with open('report.xml', 'w') as f:\n"
        '        f.write(\'<testsuite><testcase classname="test_it" name="test_ok"/></testsuite>\')\n'
        "    os._exit(0)\n"
        "atexit.register(_forge)\n"
    )
    repo, commit = make_repo(
        {"conftest.py": conftest, "test_it.py": "def test_ok():\n    assert False\n"}
    )
    pipeline = Pipeline.model_validate(
        {
            "steps": [
                {
                    "name": "test",
                    "run": "python3 -m pytest -q -p no:cacheprovider --junitxml=report.xml",
                }
            ],
            "report": {"format": "junit", "path": "report.xml"},
        }
    )
    result = runner.run(
        CIRequest(repo=repo, commit=commit, pipeline=pipeline, image=images["python"])
    )
    assert result.steps[0].exit_code == 0  # the hook did exit 0
    assert result.tests == {"test_it::test_ok": "passed"}  # and did rewrite the report
    assert result.status is CIStatus.FAILED
    assert "report contradicts the test runner" in (result.error or "")


def test_a_daemon_of_one_step_is_dead_before_the_next(
    runner: CIRunner, images: dict[str, str], make_repo: MakeRepo
) -> None:
    steps = [
        {
            "name": "plant",
            "run": "nohup bash -c 'sleep 1; touch daemon-was-here' >/dev/null 2>&1 &",
        },
        {"name": "look", "run": "sleep 2; ls; test ! -e daemon-was-here && echo NO-DAEMON"},
    ]
    result = _run(runner, images, make_repo, steps)
    assert "NO-DAEMON" in result.steps[1].log, result.steps[1].log  # type: ignore[attr-defined]


def test_killing_everything_is_the_codes_failure_not_an_infrastructure_fault(
    runner: CIRunner, images: dict[str, str], make_repo: MakeRepo
) -> None:
    steps = [
        {"name": "kill", "run": "kill -9 -1 1 || true; sleep 1"},
        {"name": "after", "run": "echo STILL-HERE"},
    ]
    result = _run(runner, images, make_repo, steps)
    assert "STILL-HERE" in result.steps[1].log  # type: ignore[attr-defined]


def test_pid_1_output_does_not_reach_the_engine_log(
    docker_client: docker.DockerClient, images: dict[str, str]
) -> None:
    with DockerSandbox.start(docker_client, images["python"], Limits()) as sandbox:
        done = sandbox.exec(
            "(echo FLOOD > /proc/1/fd/1) 2>/dev/null || (echo FLOOD > /proc/1/fd/2) 2>/dev/null || true",
            env={},
            workdir="/workspace",
            timeout_s=30,
            max_output_bytes=4096,
        )
        assert done.exit_code == 0
        container = docker_client.containers.get(sandbox.container_id)
        assert container.attrs["HostConfig"]["LogConfig"]["Type"] == "none"


# a neighbour of the default CPU weight: after 2 s, `n` processes spinning for 4 s; it prints
# when they started and ended, and the CPU seconds they got
BUSY_SECONDS = """
import os, time
time.sleep(2)
started = time.time()
for _ in range({n}):
    if os.fork() == 0:
        while time.time() < started + 4:
            pass
        os._exit(0)
for _ in range({n}):
    os.wait()
times = os.times()
print(started, time.time(), times.children_user + times.children_system)
"""
# `n` processes spinning in the sandbox for 8 s, and the container's CPU seconds sampled
# with the time every 0.2 s (cgroup v1's cpuacct, else v2's cpu.stat)
BURN = """
for i in $(seq {n}); do (while :; do :; done) & done
usage() {{
    cat /sys/fs/cgroup/cpuacct/cpuacct.usage 2>/dev/null \\
        || awk '/^usage_usec/ {{print $2 * 1000}}' /sys/fs/cgroup/cpu.stat
}}
end=$(( $(date +%s) + 8 ))
while [ "$(date +%s)" -lt "$end" ]; do echo "$(date +%s.%N) $(usage)"; sleep 0.2; done
kill $(jobs -p)
"""


def _used_between(samples: str, start: float, end: float) -> float:
    """The CPU seconds the sandbox used from `start` to `end`, from its samples."""
    points = [line.split() for line in samples.splitlines() if line.strip()]
    inside = [(float(t), int(u) / 1e9) for t, u in points if start <= float(t) <= end]
    assert len(inside) >= 10, samples[-2000:]
    (first, used_first), (last, used_last) = inside[0], inside[-1]
    return (used_last - used_first) * (end - start) / (last - first)


def test_a_sandbox_burning_every_cpu_leaves_the_host_its_share(
    docker_client: docker.DockerClient, images: dict[str, str]
) -> None:
    """The sandbox may take every CPU nobody else wants, at a quarter of a container's
    default weight: beside a container of the default weight burning the same CPUs, it gets
    a small part of them (the kernel shares contended CPUs by weight; other load on the
    machine takes from both alike)."""
    host = engine_cpus(docker_client)
    with DockerSandbox.start(docker_client, images["python"], Limits(cpus=host)) as sandbox:
        config = docker_client.containers.get(sandbox.container_id).attrs["HostConfig"]
        assert config["CpuShares"] == SANDBOX_CPU_SHARES and config["NanoCpus"] == host * 10**9
        burnt: list[str] = []
        burner = threading.Thread(
            target=lambda: burnt.append(
                sandbox.exec(
                    BURN.format(n=host),
                    env={},
                    workdir="/workspace",
                    timeout_s=30,
                    max_output_bytes=1 << 20,
                ).output
            )
        )
        burner.start()
        printed = docker_client.containers.run(
            images["python"],
            ["python3", "-c", BUSY_SECONDS.format(n=host)],
            remove=True,
            network_mode="none",
        )
        burner.join()
    start, end, neighbour = (float(x) for x in printed.decode().split()[-3:])
    sandbox_seconds = _used_between(burnt[0], start, end)
    assert neighbour > 2 * sandbox_seconds, (neighbour, sandbox_seconds)


def test_io_uring_and_namespaces_are_refused(
    runner: CIRunner, images: dict[str, str], make_repo: MakeRepo
) -> None:
    probe = (
        "import ctypes, errno\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "params = ctypes.create_string_buffer(120)\n"
        "fd = libc.syscall(425, 4, params)\n"  # io_uring_setup on x86_64
        "print('IO_URING', fd, errno.errorcode.get(ctypes.get_errno()))\n"
    )
    script = f"python3 - <<'EOF'\n{probe}EOF\nunshare -r true && echo UNSHARED || echo NO-UNSHARE"
    result = _run(runner, images, make_repo, [{"name": "probe", "run": script}])
    log = result.steps[0].log  # type: ignore[attr-defined]
    assert "IO_URING -1 EPERM" in log, log
    assert "NO-UNSHARE" in log, log


def test_a_sandbox_gets_at_most_the_hosts_cpus() -> None:
    assert sandbox_cpus(Limits(), 2) == 2
    assert sandbox_cpus(Limits(), 1) == 1
    assert sandbox_cpus(Limits(cpus=0.5), 8) == 0.5
