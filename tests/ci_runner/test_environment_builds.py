"""Environment builds as the task's own CI had them: runner-like apt and tools, packages as of
the task's date, setup once, a warm-up that cannot set up fails the build, services."""

from __future__ import annotations

import socket

import docker
import pytest

from ci_runner import CIRequest, CIRunner, CISettings, CIStatus, Pipeline
from ci_runner.environments import EnvironmentBuilder, EnvironmentSpec
from ci_runner.errors import EnvironmentBuildError
from ci_runner.image_layout import ENV_IMAGE_LABEL
from ci_runner.images import ImageBuilder
from ci_runner.providers.docker.provider import DockerProvider
from tests.ci_runner.env_builds import remove_built_images
from tests.ci_runner.env_projects import PYTHON_FILES
from tests.ci_runner.sandbox.test_cache_layer import FreeDisk, _engine_root
from tests.conftest import MakeRepo

BEFORE_SIX_1_17 = "2023-06-01"  # six 1.16.0 is of 2021-05, 1.17.0 of 2024-12
_TEST = {"name": "test", "run": "python -m pytest -q -p no:cacheprovider --junitxml=report.xml"}
_REPORT = {"format": "junit", "path": "report.xml"}


@pytest.fixture(scope="module")
def env_runner(docker_client: docker.DockerClient, env_settings: CISettings) -> CIRunner:
    return CIRunner(env_settings, DockerProvider(env_settings, docker_client))


def _spec(repo: str, commit: str, pipeline: Pipeline, as_of: str | None = None) -> EnvironmentSpec:
    return EnvironmentSpec(
        repo=repo, commit=commit, language="python", pipeline=pipeline, as_of=as_of
    )


def _run(runner: CIRunner, spec: EnvironmentSpec, image: str) -> CIRequest:
    return CIRequest(repo=spec.repo, commit=spec.commit, pipeline=spec.pipeline, image=image)


def _six_is(version: str, python: str = "python") -> str:
    return f"{python} -c 'import six; assert six.__version__ == \"{version}\", six.__version__'"


RUNNER_SCRIPT = {"ci/tools.sh": "echo 'scale=2; 1/4' | bc > /opt/arena/quarter\n"}
RUNNER_LIKE = Pipeline.model_validate(
    {
        "setup": [
            # no `apt-get update` first, no -y, Ubuntu's name of netcat: as jobs write it
            {"name": "apt", "run": "sudo apt-get install netcat"},
            {"name": "deps", "run": "pip install six"},
            # a side effect that fails when repeated: setup runs once, in the build only
            {"name": "link", "run": "ln -s /workspace/pyproject.toml /opt/arena/linked-once"},
            # a runner tool called by a repository script the step runs (`RUNNER_SCRIPT`)
            {"name": "a repository script", "run": 'bash "$GITHUB_WORKSPACE/ci/tools.sh"'},
            # what setup writes for the steps after it reaches every CI run's steps
            {
                "name": "choose a tool",
                "run": "mkdir -p /opt/tools && printf '#!/bin/sh\\necho picked\\n' > "
                "/opt/tools/picked && chmod +x /opt/tools/picked && "
                'echo /opt/tools >> "$GITHUB_PATH" && echo "PICKED_BY=setup" >> "$GITHUB_ENV"',
            },
        ],
        "steps": [
            {"name": "offline", "run": 'test "$(ls /sys/class/net)" = lo'},
            {"name": "netcat", "run": "command -v nc"},
            {"name": "jq", "run": "jq --version"},  # the runner has it; the build installed it
            {"name": "bc, for a script", "run": 'test "$(cat /opt/arena/quarter)" = .25'},
            # jobs print the runner's release: Debian's, in lsb-release's form
            {"name": "machine info", "run": '. /etc/lsb-release && test "$DISTRIB_ID" = Debian'},
            {"name": "six as of the task", "run": _six_is("1.16.0")},
            {
                "name": "setup's environment files",
                "run": 'test "$(picked)" = picked && test "$PICKED_BY" = setup && '
                'echo "PICKED_BY=step" >> "$GITHUB_ENV" && test "$PICKED_BY" = setup',
            },
            {"name": "an earlier step's", "run": 'test "$PICKED_BY" = step'},
            {
                "name": "fresh venv",
                "run": "python -m venv /tmp/v && /tmp/v/bin/pip install six && "
                + _six_is("1.16.0", "/tmp/v/bin/python"),
            },
            _TEST,
        ],
        "report": _REPORT,
        "env": {
            "GITHUB_ENV": "/tmp/github_env",
            "GITHUB_PATH": "/tmp/github_path",
            "GITHUB_WORKSPACE": "/workspace",
        },
    }
)


def test_a_build_resolves_as_of_the_tasks_date_with_the_runners_apt_and_tools(
    environments: EnvironmentBuilder,
    env_runner: CIRunner,
    make_repo: MakeRepo,
    docker_client: docker.DockerClient,
) -> None:
    repo, commit = make_repo({**PYTHON_FILES, **RUNNER_SCRIPT})
    spec = _spec(repo, commit, RUNNER_LIKE, as_of=BEFORE_SIX_1_17)
    tag = environments.ensure(spec)
    result = env_runner.run(_run(env_runner, spec, tag))
    failed = [(s.name, s.log[-800:]) for s in result.steps if not s.succeeded]
    assert result.status is CIStatus.PASSED, failed
    assert env_runner.run(_run(env_runner, spec, tag)).status is CIStatus.PASSED  # again

    record = environments.record(spec)
    assert record is not None and record.error is None and record.tag == tag
    assert record.packages_as_of == "2023-06-01T23:59:59Z"
    labels = docker_client.images.get(tag).labels
    assert labels[f"{ENV_IMAGE_LABEL}.packages-as-of"] == "2023-06-01T23:59:59Z"


def test_without_a_date_or_with_the_date_cut_off_packages_are_todays(
    docker_client: docker.DockerClient, env_settings: CISettings
) -> None:
    spec = _spec("/r", "a" * 40, RUNNER_LIKE, as_of=BEFORE_SIX_1_17)
    on = EnvironmentBuilder(ImageBuilder(DockerProvider(env_settings, docker_client), env_settings))
    off = EnvironmentBuilder(
        ImageBuilder(
            DockerProvider(env_settings, docker_client),
            env_settings.model_copy(update={"package_date_cut": False}),
        )
    )
    assert on.effective(spec).as_of == "2023-06-01T23:59:59Z"
    assert off.effective(spec).as_of is None
    assert off.effective(spec).key("sha256:1") == _spec("/r", "a" * 40, RUNNER_LIKE).key("sha256:1")


def test_a_warm_up_that_cannot_install_fails_the_build_with_its_reason(
    environments: EnvironmentBuilder, make_repo: MakeRepo
) -> None:
    """six 1.17.0 did not exist on the task's date: the warm-up's install fails, and the
    build says so instead of leaving an image whose offline runs cannot install it."""
    repo, commit = make_repo(PYTHON_FILES)
    pipeline = Pipeline.model_validate(
        {
            "setup": [{"name": "deps", "run": "pip install six"}],
            "steps": [{"name": "deps of the tests", "run": "pip install six==1.17.0"}, _TEST],
            "report": _REPORT,
        }
    )
    spec = _spec(repo, commit, pipeline, as_of=BEFORE_SIX_1_17)
    with pytest.raises(EnvironmentBuildError, match="could not set itself up") as failed:
        environments.ensure(spec)
    assert "pip could not find a version" in str(failed.value)
    assert "deps of the tests" in str(failed.value)
    state = environments.state(spec)
    assert state is not None and not state.built and state.error == str(failed.value)


def test_a_warm_up_whose_tests_fail_still_builds(
    environments: EnvironmentBuilder, env_runner: CIRunner, make_repo: MakeRepo
) -> None:
    failing = {**PYTHON_FILES, "test_uses_six.py": "def test_not_yet():\n    assert False\n"}
    repo, commit = make_repo(failing)
    pipeline = Pipeline.model_validate(
        {"setup": [{"name": "deps", "run": "pip install six"}], "steps": [_TEST], "report": _REPORT}
    )
    spec = _spec(repo, commit, pipeline)
    result = env_runner.run(_run(env_runner, spec, environments.ensure(spec)))
    assert result.status is CIStatus.FAILED
    assert result.tests == {"test_uses_six::test_not_yet": "failed"}


def _free_port() -> int:
    """A port free on this host: builds here use the host's network, where the service's
    port is the host's loopback port (a CI run has its own loopback)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_postgres_service_serves_the_build_and_every_run_with_the_jobs_credentials(
    environments: EnvironmentBuilder, env_runner: CIRunner, make_repo: MakeRepo
) -> None:
    port = _free_port()
    psql = f"PGPASSWORD=secret psql -h localhost -p {port} -U timeline -d timeline -tA"
    pipeline = Pipeline.model_validate(
        {
            "services": {
                "postgres": {
                    "image": "postgres:12",
                    "env": {
                        "POSTGRES_USER": "timeline",
                        "POSTGRES_PASSWORD": "secret",
                        "POSTGRES_DB": "timeline",
                    },
                    "ports": [f"{port}:5432"],
                }
            },
            "setup": [
                {"name": "client", "run": "sudo apt-get install postgresql-client"},
                {"name": "migrate", "run": f"{psql} -c 'create table t (x int)'"},
            ],
            "steps": [
                {"name": "offline", "run": 'test "$(ls /sys/class/net)" = lo'},
                {
                    "name": "who",
                    "run": f"{psql} -c \"select current_user || '@' || current_database()\"",
                },
                {"name": "fresh", "run": f"! {psql} -c 'select * from t'"},  # a new service
                {"name": "report", "run": "echo 'test db ... ok'"},
            ],
            "report": {"format": "libtest", "step": "report"},
        }
    )
    spec = _spec(*make_repo(PYTHON_FILES), pipeline)
    result = env_runner.run(_run(env_runner, spec, environments.ensure(spec)))
    failed = [(s.name, s.log[-800:]) for s in result.steps if not s.succeeded]
    assert result.status is CIStatus.PASSED, failed
    assert "timeline@timeline" in result.steps[1].log


BEFORE_ITOA_1_0_2 = "2022-01-01"  # itoa 1.0.1 is of 2021-12-12, 1.0.2 of 2022-05-15
_ITOA_CRATE = {
    # rust-version asks for a Rust whose cargo reads a sparse index (Debian trixie's 1.85)
    "Cargo.toml": (
        '[package]\nname = "dated"\nversion = "0.1.0"\nedition = "2021"\nrust-version = "1.80"\n'
        '\n[dependencies]\nitoa = "1"\n'
    ),
    "src/lib.rs": "pub fn show(n: u32) -> String { itoa::Buffer::new().format(n).to_owned() }\n",
}


def test_a_rust_crate_without_a_lock_gets_the_crates_of_the_tasks_date(
    environments: EnvironmentBuilder, env_runner: CIRunner, make_repo: MakeRepo
) -> None:
    """No Cargo.lock: Cargo locks through the date-cut index's crates.io (itoa 1.0.1, not
    today's), and the offline runs build on what was fetched."""
    repo, commit = make_repo(_ITOA_CRATE)
    pipeline = Pipeline.model_validate(
        {
            "steps": [
                {"name": "itoa as of the task", "run": "cargo tree --depth 1 | grep 'itoa v1.0.1'"},
                {"name": "test", "run": "cargo test"},
            ],
            "report": {"format": "libtest", "step": "test"},
        }
    )
    spec = EnvironmentSpec(
        repo=repo, commit=commit, language="rust", pipeline=pipeline, as_of=BEFORE_ITOA_1_0_2
    )
    said: list[str] = []
    tag = environments.ensure(spec, said.append)
    assert "Cargo.lock resolved as of the task's date" in said, said
    result = env_runner.run(_run(env_runner, spec, tag))
    failed = [(s.name, s.log[-800:]) for s in result.steps if not s.succeeded]
    assert not failed, failed


def test_a_hostile_setup_step_gets_no_raw_socket_and_no_memory_past_the_limit(
    docker_client: docker.DockerClient, env_settings: CISettings, make_repo: MakeRepo
) -> None:
    """A dataset line's setup steps run as root in the build box, but without NET_RAW (on a
    host-network build it sniffed the admin token off the loopback) and within the build's
    memory (it took 3 GiB of the host's), its scratch folders included (sized on top of the
    limit, their unused room was the processes' too: a compose stack's build of 2 GiB beside
    a workspace of 2 GiB held 4 GiB)."""
    small = env_settings.model_copy(update={"build_memory_mb": 512})
    assert small.limits.disk_mb >= 1536  # the workspace's room exceeds the hog's excess
    builder = EnvironmentBuilder(ImageBuilder(DockerProvider(small, docker_client), small))
    repo, commit = make_repo(PYTHON_FILES)
    sniff = "import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW); print('sniffing')"
    # 1.5 GiB: within the limit plus the workspace's room, past the limit
    hog = "x = bytearray(1536 * 2**20); x[::4096] = b'1' * len(x[::4096]); print('held')"
    for name, code, said in (
        ("sniff", sniff, "Operation not permitted"),
        ("hog", hog, "killed: the build's memory limit of 512 MiB"),
    ):
        pipeline = Pipeline.model_validate(
            {
                "setup": [{"name": name, "run": f'python3 -c "{code}"'}],
                "steps": [_TEST],
                "report": _REPORT,
            }
        )
        spec = _spec(repo, commit, pipeline)
        with pytest.raises(EnvironmentBuildError, match=f"setup step '{name}' failed") as failed:
            builder.ensure(spec)
        assert said in str(failed.value), str(failed.value)[-600:]
        assert "sniffing" not in str(failed.value) and "held" not in str(failed.value)
    remove_built_images(docker_client, small)


ALLOCATIONS = {  # 3 GiB: in one call, or by glibc, which writes a byte per block instead
    "fallocate": "fallocate -l 3G /var/fill && echo ALLOCATED",
    "posix_fallocate": (
        "python3 -c \"import os; os.posix_fallocate(os.open('/var/fill', os.O_CREAT | "
        'os.O_WRONLY), 0, 3 << 30)" && echo ALLOCATED'
    ),
}


DISK_LIMIT_MB = 512


def _filled(
    fill: str, docker_client: docker.DockerClient, env_settings: CISettings, make_repo: MakeRepo
) -> tuple[str, float]:
    """A build whose setup step runs `fill` under a disk limit of DISK_LIMIT_MB: why it
    failed, and how many MiB the host's disk lost at most while it ran."""
    small = env_settings.model_copy(update={"build_disk_mb": DISK_LIMIT_MB})
    builder = EnvironmentBuilder(ImageBuilder(DockerProvider(small, docker_client), small))
    repo, commit = make_repo(PYTHON_FILES)
    pipeline = Pipeline.model_validate(
        {"setup": [{"name": "fill", "run": fill}], "steps": [_TEST], "report": _REPORT}
    )
    with (
        FreeDisk(_engine_root(docker_client)) as disk,
        pytest.raises(EnvironmentBuildError, match="setup step 'fill' failed") as failed,
    ):
        builder.ensure(_spec(repo, commit, pipeline))
    remove_built_images(docker_client, small)
    return str(failed.value), (disk.before - disk.least) / 2**20


@pytest.mark.parametrize("how", list(ALLOCATIONS))
def test_a_setup_step_allocating_past_the_builds_disk_limit_never_takes_the_disk(
    how: str, docker_client: docker.DockerClient, env_settings: CISettings, make_repo: MakeRepo
) -> None:
    """A file allocated in one call (`fallocate -l 3G`) took its whole size at once, before
    any watch could ask: the build box's seccomp profile says the call is not supported, so
    fallocate(1) fails saying so, and glibc's posix_fallocate writes the blocks, which the
    watch sees."""
    said, drop_mb = _filled(ALLOCATIONS[how], docker_client, env_settings, make_repo)
    assert "ALLOCATED" not in said, said[-600:]
    assert ("not supported" if how == "fallocate" else "disk limit of 512 MiB") in said, said
    assert drop_mb < DISK_LIMIT_MB + 1024, f"the host's disk lost {drop_mb:.0f} MiB"


def test_a_setup_step_writing_past_the_builds_disk_limit_is_killed(
    docker_client: docker.DockerClient, env_settings: CISettings, make_repo: MakeRepo
) -> None:
    """A setup step wrote 3 GiB into the build box's own layer, unbounded: the engine is
    asked what the layer holds, and the box is killed past ARENA_BUILD_DISK_MB."""
    fill = (  # 3 GiB in chunks of 64 MiB, each said once written
        "for i in $(seq 48); do dd if=/dev/urandom bs=1M count=64 status=none >> /var/fill; "
        'echo "wrote $(( i * 64 )) MiB"; done'
    )
    said, drop_mb = _filled(fill, docker_client, env_settings, make_repo)
    assert f"killed: the build's disk limit of {DISK_LIMIT_MB} MiB" in said, said[-600:]
    wrote = [int(line.split()[1]) for line in said.splitlines() if line.startswith("wrote ")]
    # asked at least every quarter second: killed well before its 3 GiB (the layer holds
    # what the build wrote before the step too, so under load the kill may come before the
    # first chunk is said: the host's disk below bounds it then)
    assert not wrote or wrote[-1] < DISK_LIMIT_MB + 1024, wrote[-3:]
    assert drop_mb < DISK_LIMIT_MB + 1024, f"the host's disk lost {drop_mb:.0f} MiB"
