"""The Rust image answers rustup's commands and `cargo +TOOLCHAIN`: jobs that name a toolchain
run on the image's one (the task's toolchain request records the difference), and a target it
does not have is refused plainly."""

from __future__ import annotations

import docker
import pytest

from ci_runner.workflows import ANY_JOB, UnsupportedJob, derive_pipeline, derive_pipelines

pytestmark = pytest.mark.docker

SCRIPT = """
set -e
rustup --version
rustup toolchain install stable --profile minimal
rustup component add clippy rustfmt
rustup override set 1.75.0
rustup show
cd /tmp && USER=arena cargo new --lib demo -q && cd demo
cargo +stable test 2>&1
cargo +nightly -Z unstable-options --version 2>&1
if rustup target add wasm32-unknown-unknown 2>/tmp/err; then exit 9; fi
cat /tmp/err
"""


def test_rustup_and_cargo_plus_toolchain_work_in_the_rust_image(
    docker_client: docker.DockerClient, images: dict[str, str]
) -> None:
    output = docker_client.containers.run(
        images["rust"], ["sh", "-c", SCRIPT], network_mode="none", remove=True
    ).decode()
    assert "rustup 1.27.1 (arena: one toolchain" in output
    assert "test result: ok" in output  # cargo +stable test ran the crate's tests
    assert "nightly features on" in output and "cargo 1." in output
    assert "only x86_64 Linux is installed" in output


# a real workspace's shape (actions-rs and dtolnay actions, `cargo +stable` in a step)
WORKFLOW = """
on: pull_request
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions-rs/toolchain@v1
        with: {toolchain: stable, components: clippy}
      - uses: Swatinem/rust-cache@v2
      - uses: actions-rs/cargo@v1
        with:
          command: test
          args: --workspace --all-features
  msrv:
    runs-on: ubuntu-latest
    steps:
      - uses: dtolnay/rust-toolchain@1.70
      - run: cargo +1.70 test -p core
"""


def test_actions_rs_cargo_is_its_command_and_a_named_toolchain_is_the_request() -> None:
    derived = derive_pipeline({".github/workflows/ci.yml": WORKFLOW}, ["test"], "rust")
    # (every test binary runs: derived Rust pipelines get --no-fail-fast)
    assert [s.run for s in derived.pipeline.steps] == [
        "cargo test --no-fail-fast --workspace --all-features"
    ]
    assert derived.toolchain_request == "stable"
    assert any("actions-rs/cargo@v1" in n and "runs `cargo" in n for n in derived.notes)
    msrv = derive_pipeline({".github/workflows/ci.yml": WORKFLOW}, ["msrv"], "rust")
    assert msrv.toolchain_request == "1.70"


def test_a_leg_left_without_steps_names_the_actions_it_skipped() -> None:
    workflow = """
on: pull_request
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: someone/run-the-tests@v3
        with: {suite: unit}
"""
    with pytest.raises(UnsupportedJob) as refused:  # the refusal's reason names it
        derive_pipelines({".github/workflows/ci.yml": workflow}, [ANY_JOB], "rust")
    assert refused.value.reason == "no test job"
    assert "no run: step is left for a CI run (skipped: someone/run-the-tests@v3)" in str(
        refused.value
    )


def test_every_cargo_test_and_nextest_run_of_a_derived_pipeline_runs_to_its_end() -> None:
    """Both stop at their first failure unless told not to: a failing test would hide those
    after it, and no tripwire that must fail could be planted."""
    workflow = (
        "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: cargo nextest run --workspace && cargo test --doc\n"
        "      - run: cargo test --no-fail-fast -p core\n"
    )
    derived = derive_pipeline({".github/workflows/ci.yml": workflow}, ["test"], "rust")
    assert [s.run for s in derived.pipeline.steps] == [
        "cargo nextest run --no-fail-fast --workspace && cargo test --no-fail-fast --doc",
        "cargo test --no-fail-fast -p core",
    ]
