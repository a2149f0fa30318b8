"""The service benchmark's container CPU accounting on cgroup v1 and v2, either Docker driver."""

from __future__ import annotations

import time
from pathlib import Path

from bench.service_ratios import ContainerCPU


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _stat(usec: int) -> str:
    return f"usage_usec {usec}\nuser_usec {usec // 2}\nsystem_usec {usec // 2}\n"


def test_one_engine_cgroup_is_read_twice_on_v1_and_v2(tmp_path: Path) -> None:
    v1 = tmp_path / "v1" / "cpuacct/docker/cpuacct.usage"
    v2 = tmp_path / "v2" / "docker/cpu.stat"
    _write(v1, "5000000000\n")
    _write(v2, _stat(5_000_000))
    meters = [ContainerCPU(tmp_path / "v1"), ContainerCPU(tmp_path / "v2")]
    for meter in meters:
        meter.start()
    _write(v1, "7500000000\n")  # removed containers stay in the parent's count
    _write(v2, _stat(7_500_000))
    assert [m.stop() for m in meters] == [2.5, 2.5]
    assert all(m.exact for m in meters)


def test_per_container_scopes_are_sampled_while_they_live(tmp_path: Path) -> None:
    scopes = tmp_path / "system.slice"
    _write(scopes / "docker-old.scope/cpu.stat", _stat(9_000_000))  # running before: from now
    meter = ContainerCPU(tmp_path, period_s=0.05)
    meter.start()
    _write(scopes / "docker-a.scope/cpu.stat", _stat(1_000_000))
    _write(scopes / "docker-old.scope/cpu.stat", _stat(9_500_000))
    time.sleep(0.5)
    (scopes / "docker-a.scope/cpu.stat").unlink()  # removed with its container
    (scopes / "docker-a.scope").rmdir()
    _write(scopes / "docker-b.scope/cpu.stat", _stat(250_000))  # still running at the end
    used = meter.stop()
    assert used is not None and abs(used - 1.75) < 1e-9
    assert not meter.exact


def test_no_container_cgroup_gives_none(tmp_path: Path) -> None:
    meter = ContainerCPU(tmp_path)
    meter.start()
    assert meter.stop() is None


def test_only_the_given_containers_are_counted(tmp_path: Path) -> None:
    for cid, usec in (("mine", 1_000_000), ("theirs", 5_000_000)):
        _write(tmp_path / "docker" / cid / "cpu.stat", _stat(usec))
    _write(tmp_path / "docker/cpu.stat", _stat(99_000_000))  # the engine's total: not used
    running = ["mine"]
    meter = ContainerCPU(tmp_path, period_s=0.05, containers=lambda: list(running))
    meter.start()
    _write(tmp_path / "docker/mine/cpu.stat", _stat(1_500_000))
    _write(tmp_path / "docker/theirs/cpu.stat", _stat(9_000_000))
    _write(tmp_path / "docker/new/cpu.stat", _stat(300_000))
    running.append("new")
    time.sleep(0.3)
    used = meter.stop()
    assert used is not None and abs(used - 0.8) < 1e-9
    assert not meter.exact
