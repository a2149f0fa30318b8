"""Environment images: setup once with network, then every CI run offline from the image."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import docker
import docker.errors
import pygit2
import pytest

from arena.ci import TaskCI
from arena.tasks.schema import Language, Task
from arena.validation import validate_task
from ci_runner import CIRequest, CIRunner, CISettings, CIStatus, Pipeline
from ci_runner.env_layout import VENDOR_DOWNLOADS_OFF
from ci_runner.environments import (
    BUILD_LABEL,
    CACHE_DIR,
    EnvironmentBuilder,
    EnvironmentBuildError,
    EnvironmentSpec,
    runtime_env,
)
from ci_runner.image_layout import WORKSPACE
from ci_runner.images import ImageBuilder
from ci_runner.providers.docker.provider import DockerProvider
from ci_runner.toolchains import ToolchainChoice
from ci_runner.workflows.commands import without_foreign
from ci_runner.workspace import Workspaces
from tests.ci_runner.env_builds import HOST_CA, run_arena_building
from tests.ci_runner.env_projects import (
    CPP_FILES,
    CPP_PIPELINE,
    GO_FILES,
    GO_PIPELINE,
    PYTHON_FILES,
    RUST_PIPELINE,
    compiled_crates,
    python_pipeline,
    rust_files,
    rust_patch,
)
from tests.conftest import ContainerCreations, MakeRepo


@pytest.fixture(scope="module")
def env_runner(docker_client: docker.DockerClient, env_settings: CISettings) -> CIRunner:
    return CIRunner(env_settings, DockerProvider(env_settings, docker_client))


def builds_of(client: docker.DockerClient, tag: str) -> ContainerCreations:
    """Build containers of image `tag` created while it watches (the engine is shared:
    other runs build other images meanwhile)."""
    return ContainerCreations(client, f"{BUILD_LABEL}={tag}")


def _spec(repo: str, commit: str, language: str, pipeline: Pipeline) -> EnvironmentSpec:
    return EnvironmentSpec(repo=repo, commit=commit, language=language, pipeline=pipeline)


def _run(runner: CIRunner, spec: EnvironmentSpec, image: str, *diffs: str) -> CIRequest:
    return CIRequest(
        repo=spec.repo, commit=spec.commit, pipeline=spec.pipeline, image=image, diffs=diffs
    )


def test_checkout_files_carry_the_commit_time(tmp_path: Path, make_repo: MakeRepo) -> None:
    repo, commit = make_repo({"src/a.c": "int a;\n", "b.txt": "b\n"})
    workspaces = Workspaces(tmp_path / "mirrors", tmp_path / "runs")
    run_dir, checkout = workspaces.checkout(repo, commit)
    found = checkout[commit]
    assert isinstance(found, pygit2.Commit)
    when = found.commit_time
    for path in ("src/a.c", "b.txt", "src"):
        assert (run_dir / path).stat().st_mtime == when


def test_the_tag_follows_everything_that_decides_the_image() -> None:
    spec = _spec("/r", "a" * 40, "python", python_pipeline())
    assert spec.tag("sha256:1") == spec.tag("sha256:1")
    assert spec.tag("sha256:1").startswith("arena/env-python:")
    changed = [
        spec.model_copy(update={"commit": "b" * 40}),
        spec.model_copy(update={"repo": "/other"}),
        spec.model_copy(update={"pipeline": python_pipeline("pip install six iniconfig")}),
    ]
    assert len({spec.tag("sha256:1"), *(c.tag("sha256:1") for c in changed)}) == 4
    assert spec.tag("sha256:1") != spec.tag("sha256:2")  # the toolchain image


def test_offline_switches_are_on_in_runs_only() -> None:
    assert runtime_env("python")["PIP_NO_INDEX"] == "1"
    assert runtime_env("go")["GOPROXY"] == "off"
    assert runtime_env("rust")["CARGO_NET_OFFLINE"] == "true"
    assert runtime_env("rust")["CARGO_TARGET_DIR"].startswith(CACHE_DIR)


def test_vendor_binary_downloads_of_npm_install_scripts_are_switched_off() -> None:
    """Cypress's postinstall fetches from download.cypress.io, which no build reaches: with its
    documented switch the project's `pnpm install` succeeds and repeats offline."""
    env = runtime_env("python")
    assert VENDOR_DOWNLOADS_OFF.items() <= env.items()
    assert env["CYPRESS_INSTALL_BINARY"] == "0"


def test_python_environment_built_once_then_runs_offline(
    environments: EnvironmentBuilder,
    env_runner: CIRunner,
    docker_client: docker.DockerClient,
    make_repo: MakeRepo,
    env_settings: CISettings,
) -> None:
    repo, commit = make_repo(PYTHON_FILES)
    spec = _spec(repo, commit, "python", python_pipeline())
    tag = environments.ensure(spec)

    with builds_of(docker_client, tag) as builds:
        assert environments.ensure(spec) == tag  # reused: no container, no build
    assert builds.count == 0

    result = env_runner.run(_run(env_runner, spec, tag))
    failed = [(s.name, s.log[-800:]) for s in result.steps if not s.succeeded]
    assert result.status is CIStatus.PASSED, failed
    assert result.tests == {"test_uses_six::test_text_type": "passed"}

    rebuilt = environments.ensure(
        spec.model_copy(update={"pipeline": python_pipeline("pip install six iniconfig")})
    )
    assert rebuilt != tag


def test_the_build_gets_a_copy_of_the_checkout_and_no_host_path(
    environments: EnvironmentBuilder, make_repo: MakeRepo
) -> None:
    """The engine may be remote: the checkout and the build files reach the build container
    through it, on tmpfs mounts (left out of the image), files keeping their commit's time."""
    repo, commit = make_repo(PYTHON_FILES)
    found = pygit2.Repository(repo)[commit]
    assert isinstance(found, pygit2.Commit)
    probe = f"{CACHE_DIR}/probe"
    record = (
        f"mkdir -p {probe} && awk '{{print $2, $3}}' /proc/mounts > {probe}/mounts"
        f" && stat -c %Y pyproject.toml > {probe}/mtime && id -u > {probe}/uid"
        f" && ls -A /mnt > {probe}/build-files"
    )
    spec = _spec(repo, commit, "python", python_pipeline(f"pip install six && {record}"))
    tag = environments.ensure(spec)
    listing = "; echo --; ".join(
        [f"cat {probe}/{name}" for name in ("mtime", "uid", "build-files", "mounts")]
        + [f"ls -A {WORKSPACE}"]
    )
    seen = subprocess.run(
        ["docker", "run", "--rm", "--network", "none", tag, "bash", "-c", listing],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    mtime, uid, build_files, mount_lines, workspace = seen.split("--\n")
    assert mtime.strip() == str(found.commit_time)  # warm caches judge freshness by mtime
    assert uid.strip() == "0"  # setup steps run as root
    assert "bin" in build_files.split()  # the sudo shim was there during the build
    mounts = dict(line.split() for line in mount_lines.splitlines())
    assert mounts[WORKSPACE] == "tmpfs" and mounts["/mnt"] == "tmpfs", mount_lines
    assert workspace.strip() == ""  # the checkout is not part of the image


def _distinctive_ca_line(image: str) -> str | None:
    """A line of the host's CA bundle that the image's own bundle lacks (the proxy's CA)."""
    theirs = subprocess.run(
        ["docker", "run", "--rm", "--network", "none", image, "cat", str(HOST_CA)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    known = set(theirs)
    extra = [
        line
        for line in HOST_CA.read_text().splitlines()
        if len(line) == 64 and line not in known and "-" not in line
    ]
    return extra[len(extra) // 2] if extra else None


@pytest.mark.skipif(not HOST_CA.is_file(), reason="no host CA bundle to trust during builds")
def test_the_build_ca_bundle_is_not_left_in_the_image(
    environments: EnvironmentBuilder, make_repo: MakeRepo, docker_client: docker.DockerClient
) -> None:
    repo, commit = make_repo(PYTHON_FILES)
    spec = _spec(repo, commit, "python", python_pipeline())
    tag = environments.ensure(spec)
    config = docker_client.images.get(tag).attrs["Config"]
    env_names = {entry.split("=", 1)[0] for entry in config["Env"]}
    assert not env_names & {"PIP_CERT", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "HTTPS_PROXY"}
    assert not config.get("Volumes")  # runs change the caches in their own layer
    line = _distinctive_ca_line(tag)
    if line is None:
        pytest.skip("the host's CA bundle adds nothing to Debian's")
    found = subprocess.run(
        [
            "docker",
            "run",
            "--rm",
            "--network",
            "none",
            tag,
            "bash",
            "-c",
            f"ls -A /mnt; grep -rlF --exclude-dir=proc --exclude-dir=sys -e '{line}' / || true",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert found.strip() == "", found


def test_a_failed_setup_step_is_a_clear_error_and_is_remembered(
    environments: EnvironmentBuilder, docker_client: docker.DockerClient, make_repo: MakeRepo
) -> None:
    repo, commit = make_repo(PYTHON_FILES)
    pipeline = python_pipeline("echo no-such-package-marker >&2; exit 3")
    spec = _spec(repo, commit, "python", pipeline)
    with pytest.raises(EnvironmentBuildError, match="setup step 'deps' failed") as first:
        environments.ensure(spec)
    assert "no-such-package-marker" in str(first.value)
    state = environments.state(spec)
    assert state is not None and not state.built and state.error == str(first.value)
    assert state.tag is not None

    with (
        builds_of(docker_client, state.tag) as builds,
        pytest.raises(EnvironmentBuildError, match="no-such-package-marker"),
    ):
        environments.ensure(spec)  # the recorded failure, without another build
    assert builds.count == 0
    with (
        builds_of(docker_client, state.tag) as builds,
        pytest.raises(EnvironmentBuildError, match="no-such-package-marker"),
    ):
        environments.ensure(spec, retry=True)
    assert builds.count == 1

    # validation records the failure as the task's reason, without building again
    task = Task(
        instance_id="broken-setup",
        repo=repo,
        base_commit=commit,
        language=Language("python"),
        pipeline=pipeline,
        patch="diff --git a/x b/x\n",
    )
    ci = TaskCI(CIRunner(environments.images.settings), environments.images, None)
    with builds_of(docker_client, state.tag) as builds:
        verdict = validate_task(task, ci)
    assert not verdict.valid and verdict.reason is not None
    assert verdict.reason.startswith("environment build failed") and "marker" in verdict.reason
    assert builds.count == 0


def test_go_runs_offline_from_the_module_cache(
    environments: EnvironmentBuilder, env_runner: CIRunner, make_repo: MakeRepo
) -> None:
    repo, commit = make_repo(GO_FILES)
    spec = _spec(repo, commit, "go", GO_PIPELINE)
    result = env_runner.run(_run(env_runner, spec, environments.ensure(spec)))
    assert result.status is CIStatus.PASSED, [s.log[-500:] for s in result.steps]
    assert set(result.tests) == {
        "example.com/shapes/area::TestSquare",
        "example.com/shapes/perimeter::TestSquare",
    }


def test_a_run_from_an_environment_image_may_write_only_its_own_layer_of_the_caches(
    environments: EnvironmentBuilder, env_runner: CIRunner, make_repo: MakeRepo
) -> None:
    """The caches get a layer of the run's own over the image's (they change copy-on-write,
    nothing is copied before the first step), nothing else is writable by the sandbox user,
    and what one run writes there no other run sees."""
    repo, commit = make_repo(GO_FILES)
    spec = _spec(repo, commit, "go", GO_PIPELINE)
    image = environments.ensure(spec)
    writable = (
        "find / -xdev -writable -not -type l -not -path '/proc/*' -not -path /tmp "
        f"-not -path {WORKSPACE} -not -path /home/arena -not -path '{CACHE_DIR}' "
        f"-not -path '{CACHE_DIR}/*' 2>/dev/null > /tmp/writable || true\n"
        "cat /tmp/writable; test ! -s /tmp/writable"
    )
    probe = Pipeline.model_validate(
        {
            "steps": [
                {"name": "first to write", "run": f"test ! -e {CACHE_DIR}/marker"},
                {"name": "write", "run": f"touch {CACHE_DIR}/marker {CACHE_DIR}/go-build/x"},
                {"name": "nothing else", "run": writable},
                {"name": "report", "run": "echo 'test probe ... ok'"},
            ],
            "report": {"format": "libtest", "step": "report"},
        }
    )
    request = CIRequest(repo=repo, commit=commit, pipeline=probe, image=image)
    for _ in range(2):  # the second run does not see the first one's marker
        result = env_runner.run(request)
        failed = [(s.name, s.log[-800:]) for s in result.steps if not s.succeeded]
        assert result.status is CIStatus.PASSED, failed


def test_a_warm_cargo_target_recompiles_only_the_patched_crate(
    environments: EnvironmentBuilder,
    env_runner: CIRunner,
    make_repo: MakeRepo,
    docker_client: docker.DockerClient,
) -> None:
    """The warm-up built the tests (nothing compiles again in a run at the base commit) and
    ran none of them: a test that leaves a mark in the image's cache left none."""
    mark = f"{CACHE_DIR}/a-test-ran"
    files = rust_files(functions=3) | {
        "alpha/tests/marks.rs": f'#[test]\nfn marks() {{ std::fs::write("{mark}", "").ok(); }}\n'
    }
    repo, commit = make_repo(files)
    spec = _spec(repo, commit, "rust", RUST_PIPELINE)
    image = environments.ensure(spec)
    look = ["sh", "-c", f"if test -e {mark}; then echo ran; else echo none; fi"]
    seen = docker_client.containers.run(image, look, network_mode="none", remove=True)
    assert seen.decode().strip() == "none", "the warm-up ran the tests"
    result = env_runner.run(_run(env_runner, spec, image, rust_patch("delta")))
    assert result.status is CIStatus.PASSED, [s.log[-800:] for s in result.steps]
    test_log = next(s.log for s in result.steps if s.name == "test")
    assert compiled_crates(test_log) == {"delta"}, test_log[:2000]
    assert "sums_0" in " ".join(result.tests) and "marks" in " ".join(result.tests)

    unpatched = env_runner.run(_run(env_runner, spec, image))
    assert compiled_crates(next(s.log for s in unpatched.steps if s.name == "test")) == set()


def test_taskci_runs_a_task_with_setup_steps_in_its_environment(
    environments: EnvironmentBuilder,
    env_runner: CIRunner,
    docker_client: docker.DockerClient,
    env_settings: CISettings,
    make_repo: MakeRepo,
) -> None:
    repo, commit = make_repo(PYTHON_FILES)
    pipeline = python_pipeline()
    task = Task(
        instance_id="six-1",
        repo=repo,
        base_commit=commit,
        language=Language("python"),
        pipeline=pipeline,
    )
    ci = TaskCI(
        env_runner, ImageBuilder(DockerProvider(env_settings, docker_client), env_settings), None
    )
    image = ci.image_for(task)
    assert image == environments.ensure(_spec(repo, commit, "python", pipeline))
    # no setup step, and its steps call only what the image has (pip is not in it)
    calls_what_the_image_has = (pipeline.steps[0], pipeline.steps[-1])
    bare = pipeline.model_copy(update={"setup": (), "steps": calls_what_the_image_has})
    plain = task.model_copy(update={"pipeline": bare})
    assert ci.image_for(plain).startswith("arena/ci-python:")


def test_build_env_and_list_show_each_tasks_environment(
    environments: EnvironmentBuilder, env_settings: CISettings, make_repo: MakeRepo, tmp_path: Path
) -> None:
    repo, commit = make_repo(PYTHON_FILES)
    good = python_pipeline()
    bad = python_pipeline("echo cannot-install-marker; exit 1")
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        "".join(
            json.dumps(
                {
                    "instance_id": name,
                    "repo": repo,
                    "base_commit": commit,
                    "language": "python",
                    "pipeline": pipeline.model_dump(mode="json"),
                }
            )
            + "\n"
            for name, pipeline in (("good-1", good), ("bad-1", bad))
        )
    )
    before = run_arena_building(["tasks", "list", "--tasks", str(tasks)], env_settings)
    assert before.returncode == 0, before.stderr
    assert before.stdout.count("not built") == 2 and "not validated" in before.stdout

    built = run_arena_building(["tasks", "build-env", "--tasks", str(tasks)], env_settings)
    assert built.returncode == 2, built.stdout + built.stderr
    tag = environments.ensure(_spec(repo, commit, "python", good))
    assert tag in built.stdout and "cannot-install-marker" in built.stdout

    after = run_arena_building(["tasks", "list", "--tasks", str(tasks)], env_settings)
    assert tag in after.stdout and "build failed" in after.stdout, after.stdout


def test_a_repo_asking_for_python_3_13_gets_trixies_toolchain(
    environments: EnvironmentBuilder, env_runner: CIRunner, make_repo: MakeRepo
) -> None:
    """The first run bootstraps arena/base:trixie (minutes); later runs reuse it."""
    repo, commit = make_repo({**PYTHON_FILES, ".python-version": "3.13\n"})
    pipeline = Pipeline.model_validate(
        {
            "setup": [{"name": "deps", "run": "pip install six"}],
            "steps": [
                {
                    "name": "test",
                    "run": "python -m pytest -q -p no:cacheprovider --junitxml=r.xml && python --version",
                }
            ],
            "report": {"format": "junit", "path": "r.xml"},
        }
    )
    spec = _spec(repo, commit, "python", pipeline)
    choice = environments.toolchain_for(spec)
    assert (choice.suite, choice.version, choice.notes) == ("trixie", "3.13", ())
    result = env_runner.run(_run(env_runner, spec, environments.ensure(spec)))
    assert result.status is CIStatus.PASSED, [s.log[-800:] for s in result.steps]
    assert "Python 3.13" in result.steps[-1].log

    asks_312 = _spec(*make_repo({**PYTHON_FILES, ".python-version": "3.12\n"}), "python", pipeline)
    assert environments.toolchain_for(asks_312).notes == (
        ".python-version asks for python 3.12; runs on 3.13 (trixie)",
    )
    job_asks = spec.model_copy(update={"toolchain_request": "3.11"})  # the job outranks the repo
    assert environments.toolchain_for(job_asks) == ToolchainChoice("bookworm", "3.11")


def test_cpp_gets_the_apt_packages_its_setup_installs_with_sudo(
    environments: EnvironmentBuilder, env_runner: CIRunner, make_repo: MakeRepo
) -> None:
    repo, commit = make_repo(CPP_FILES)
    spec = _spec(repo, commit, "cpp", CPP_PIPELINE)
    result = env_runner.run(_run(env_runner, spec, environments.ensure(spec)))
    assert result.status is CIStatus.PASSED, [s.log[-800:] for s in result.steps]
    assert result.tests == {"crc_of_hello": "passed"}
    stats = result.steps[-1].log
    hits = re.search(r"Hits:\s+(\d+)", stats) or re.search(r"cache hit \(direct\)\s+(\d+)", stats)
    assert hits is not None and int(hits.group(1)) >= 2, stats  # compiled at the base commit


def test_a_brew_formula_newer_than_bookworms_comes_from_the_newest_suite_alone(
    environments: EnvironmentBuilder, env_runner: CIRunner, make_repo: MakeRepo
) -> None:
    # PowerGridModel's Linux leg: `brew install ... msgpack-cxx`, then find_package(msgpack-cxx),
    # a name bookworm's msgpack 4.1 does not know
    setup, dropped = without_foreign("brew install msgpack-cxx")
    assert dropped == []
    probe = (
        "cmake_minimum_required(VERSION 3.16)\nproject(p CXX)\nfind_package(msgpack-cxx REQUIRED)\n"
    )
    repo, commit = make_repo({"probe/CMakeLists.txt": probe})
    pipeline = Pipeline.model_validate(
        {
            "setup": [{"name": "deps", "run": setup}],
            "steps": [
                {"name": "configure", "run": "cmake -S probe -B /tmp/probe"},
                {"name": "libc", "run": "dpkg-query -W libc6 | grep -q '\t2\\.36'"},
                {"name": "report", "run": "echo 'test msgpack_cxx_found ... ok'"},
            ],
            "report": {"format": "libtest", "step": "report"},
        }
    )
    spec = _spec(repo, commit, "cpp", pipeline)
    result = env_runner.run(_run(env_runner, spec, environments.ensure(spec)))
    assert result.status is CIStatus.PASSED, [s.log[-800:] for s in result.steps]
    assert result.tests == {"msgpack_cxx_found": "passed"}


def test_a_job_without_setup_steps_gets_the_runner_tools_its_steps_call(
    environments: EnvironmentBuilder, env_runner: CIRunner, make_repo: MakeRepo
) -> None:
    """electron's shape: no setup step, and a CI step calls `node`, which GitHub's runner
    has and the C++ image lacks (exit 127 in every run). Its runs now get an environment
    image with what the image lacks; a step calling only what the image has needs none."""
    repo, commit = make_repo({"README.md": "x\n"})
    calls = _junit_pipeline("echo '{\"a\": 7}' | jq .a | grep -qx 7 && make --version")
    spec = _spec(repo, commit, "cpp", calls)
    assert environments.lacking_tools(spec) == ("jq",)  # make is in the image
    assert environments.needs_build(spec)
    result = env_runner.run(_run(env_runner, spec, environments.image_for(spec)))
    assert result.status is CIStatus.PASSED, [s.log[-500:] for s in result.steps]
    plain = _spec(repo, commit, "cpp", _junit_pipeline("make --version"))
    assert environments.lacking_tools(plain) == () and not environments.needs_build(plain)


def _junit_pipeline(command: str) -> Pipeline:
    """One step running `command`, then writing a JUnit report of one passing test."""
    report = 'printf \'<testsuite><testcase classname="t" name="ok"/></testsuite>\' > r.xml'
    return Pipeline.model_validate(
        {
            "steps": [{"name": "tools", "run": f"{command} && {report}"}],
            "report": {"format": "junit", "path": "r.xml"},
        }
    )
