"""Go releases from the module proxy: what a request means, and a fetched one works offline."""

from __future__ import annotations

import time
from pathlib import Path

import docker
import pytest

from ci_runner.config import CISettings
from ci_runner.go_toolchain import fetch_script, go_release
from ci_runner.images import ImageBuilder
from ci_runner.providers.docker.provider import DockerProvider
from ci_runner.toolchains import toolchain_choice


@pytest.mark.parametrize(
    ("requested", "release", "noted"),
    [
        ("1.22.5", "1.22.5", False),  # an exact release is taken as it is
        ("1.21", "1.21.13", False),  # a line gets its last patch, as setup-go does
        ("1.20", "1.20.14", False),  # before 1.21 too: the proxy serves those releases
        ("1.20.0", "1.20", False),  # whose first release has no ".0"
        ("1.19.x", "1.19.13", False),
        (">=1.22", "1.22.12", False),
        ("stable", "1.27.4", False),
        ("1.40", "1.40.0", False),  # a line newer than the table: its first release
        ("1.11", "1.13.15", True),  # older than modules: the oldest there is, noted
        ("tip", "1.27.4", True),
    ],
)
def test_a_request_names_one_release(requested: str, release: str, noted: bool) -> None:
    got, note = go_release(requested)
    assert got == release and (note is not None) == noted


def test_the_fetch_leaves_the_release_first_on_path_and_no_cache() -> None:
    script = fetch_script("1.22.5", "/tmp/arena-ca.crt")
    assert "golang.org/toolchain@v0.0.1-go1.22.5.$(go env GOOS)-$(go env GOARCH)" in script
    assert "ln -sf /usr/local/go-1.22.5/bin/go /usr/local/bin/go" in script
    assert "rm -rf /tmp/arena-gotoolchain /tmp/arena-gotoolchain.json /tmp/arena-ca.crt" in script


@pytest.mark.docker
@pytest.mark.timeout(1800)
def test_a_go_release_fetched_from_the_proxy_runs_offline(
    docker_client: docker.DockerClient, ci_settings: CISettings
) -> None:
    host_ca = Path("/etc/ssl/certs/ca-certificates.crt")  # trusts a TLS-intercepting proxy
    settings = ci_settings.model_copy(
        update={"build_ca_bundle": ci_settings.build_ca_bundle or host_ca}
    )
    builder = ImageBuilder(DockerProvider(settings, docker_client), settings)
    choice = toolchain_choice("go", "1.21.13", {"go.mod": "module m\n\ngo 1.21\n"})
    assert choice.go_release == "1.21.13" and choice.deviation is None
    started = time.monotonic()
    tag = builder.ensure_toolchain("go", choice)
    print(f"Go 1.21.13 toolchain image in {time.monotonic() - started:.1f}s")
    assert builder.find_toolchain("go", choice) == tag
    output = docker_client.containers.run(
        tag,
        ["sh", "-c", "go version && GOTOOLCHAIN=local GOPROXY=off go env GOROOT"],
        network_mode="none",
        remove=True,
    ).decode()
    assert "go version go1.21.13 linux/" in output and "/usr/local/go-1.21.13" in output
    files = docker_client.containers.run(
        tag, ["sh", "-c", "ls /tmp; ls /root/go 2>/dev/null || true"], remove=True
    ).decode()
    assert "arena-ca.crt" not in files and "arena-gotoolchain" not in files
