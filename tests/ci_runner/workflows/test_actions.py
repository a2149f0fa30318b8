"""Widely used actions mapped to their effect on a derived pipeline, each on the snippet a real
workflow writes."""

from __future__ import annotations

import pytest

from ci_runner.workflows.actions import Effect, use_action


@pytest.mark.parametrize(
    ("uses", "inputs", "effect", "expected"),
    [
        ("actions-rs/cargo@v1", {"command": "test", "args": "--all"}, Effect.RUN, "cargo test --all"),
        ("actions-rs/cargo@v1", {"command": "test", "toolchain": "nightly"}, Effect.RUN, "cargo +nightly test"),
        ("actions-rs/cargo@v1", {"command": "test", "use-cross": "true"}, Effect.RUN, "cargo test"),
        ("pdm-project/setup-pdm@v4", {"python-version": "3.12"}, Effect.INSTALL, "python -m pip install pdm"),
        ("astral-sh/setup-uv@v5", {"version": "0.4.0"}, Effect.INSTALL, "python -m pip install uv==0.4.0"),
        ("abatilo/actions-poetry@v2", {"poetry-version": "1.8.3"}, Effect.INSTALL, "python -m pip install poetry==1.8.3"),
        ("taiki-e/install-action@nextest", {}, Effect.INSTALL, "cargo install --locked cargo-nextest"),
        ("Swatinem/rust-cache@v2", {}, Effect.NOOP, None),
        ("golangci/golangci-lint-action@v6", {"version": "v1.59"}, Effect.SKIPPED, None),
        ("pypa/gh-action-pypi-publish@release/v1", {}, Effect.SKIPPED, None),
        ("actions-rs/toolchain@v1", {"toolchain": "stable", "components": "clippy"}, Effect.PROVIDED, None),
        ("some/unknown-action@v1", {}, Effect.SKIPPED, None),
    ],
)  # fmt: skip
def test_each_action_has_its_effect(
    uses: str, inputs: dict[str, str | None], effect: Effect, expected: str | None
) -> None:
    use = use_action(uses, inputs)
    assert use.effect is effect, use.note
    assert (use.run or use.setup) == expected


@pytest.mark.parametrize(
    ("uses", "asked"),
    [
        ("dtolnay/rust-toolchain@stable", "stable"),
        ("dtolnay/rust-toolchain@1.75", "1.75"),
        ("dtolnay/rust-toolchain@nightly", "nightly"),
        ("dtolnay/rust-toolchain@master", None),  # the action's branch: its input says
        ("actions-rs/toolchain@v1", "stable"),
    ],
)
def test_a_rust_toolchain_action_asks_for_its_channel(uses: str, asked: str | None) -> None:
    inputs: dict[str, str | None] = {"toolchain": "stable"} if "actions-rs" in uses else {}
    assert use_action(uses, inputs).toolchain_request == asked
