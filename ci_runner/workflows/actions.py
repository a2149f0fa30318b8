"""What a step's `uses:` amounts to in a derived pipeline: one table of marketplace actions.

A setup action the image provides (checkout, setup-python/go/node, a Rust toolchain) becomes a
note and perhaps a toolchain request; a tool installer (uv, poetry, pnpm, just, taiki-e's
tools) becomes a setup command; caches are no-ops; conda and Docker actions mark the leg;
anything else is skipped. Local composite actions are not here: `steps.py` expands them.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from enum import StrEnum


class Effect(StrEnum):
    PROVIDED = "provided"  # the image has it (toolchains, checkout)
    INSTALL = "install"  # a setup command installs the tool
    NOOP = "no-op"  # caches: nothing to do offline
    CONDA = "conda"  # sets up conda: the leg needs conda
    DOCKER = "docker"  # builds or runs containers: the leg needs Docker
    RUN = "run"  # runs a command as a step of its own (actions-rs/cargo)
    DOWNLOAD = "download"  # fetches another job's artifacts: the leg needs that job's output
    SKIPPED = "skipped"  # anything else: cannot run offline, skipped with a note


@dataclass(frozen=True)
class ActionUse:
    effect: Effect
    note: str
    setup: str | None = None  # the setup command, for INSTALL
    run: str | None = None  # the step's command, for RUN
    toolchain_request: str | None = None  # the version a setup action asks for
    outputs: dict[str, str] = field(default_factory=dict)  # what later steps may read


_CHECKOUT = re.compile(r"^actions/checkout@", re.IGNORECASE)
_CACHE = re.compile(
    r"^(?:actions/cache(?:/restore|/save)?|Swatinem/rust-cache|mozilla-actions/sccache-action"
    r"|hendrikmuhs/ccache-action|actions/setup-[\w-]+-cache)@",
    re.IGNORECASE,
)
# toolchain setup actions (any `*/setup-*` not matched above): the image provides the tool
_TOOLCHAINS = re.compile(
    r"^(?:dtolnay/rust-toolchain|actions-rs/toolchain|[\w-]+/setup-[\w-]+)@", re.IGNORECASE
)
_CONDA = re.compile(
    r"^[\w-]+/(?:setup-(?:mini|micro)?conda|setup-micromamba|provision-with-micromamba)@",
    re.IGNORECASE,
)
_DOCKER = re.compile(
    r"^(?:docker://|docker/build-push-action@|addnab/docker-run-action@|docker/bake-action@)",
    re.IGNORECASE,
)
_POETRY = re.compile(
    r"^(?:snok/install-poetry|Gr1N/setup-poetry|abatilo/actions-poetry)@", re.IGNORECASE
)
_UV = re.compile(r"^astral-sh/setup-uv@", re.IGNORECASE)
_PDM = re.compile(r"^pdm-project/setup-pdm@", re.IGNORECASE)
_CARGO = re.compile(r"^actions-rs/cargo@", re.IGNORECASE)
# actions whose only effect is a lint report, an upload or a release: skipped, and said why
_NOT_FOR_TESTS = re.compile(
    r"^(?:golangci/golangci-lint-action|pypa/gh-action-pypi-publish|actions-rs/clippy-check"
    r"|giraffate/clippy-action|reviewdog/[\w-]+|pre-commit/action|super-linter/super-linter"
    r"|github/super-linter|codecov/codecov-action|coverallsapp/github-action"
    r"|actions/upload-artifact)@",
    re.IGNORECASE,
)
# actions that fetch what another job (or run) built: a leg that needs them runs alone in vain
_DOWNLOADS = re.compile(
    r"^(?:actions/download-artifact|dawidd6/action-download-artifact)@", re.IGNORECASE
)
_RUST_CHANNEL = re.compile(r"^(?:stable|beta|nightly(?:-\d{4}-\d{2}-\d{2})?|\d+\.\d+(?:\.\d+)?)$")
_PNPM = re.compile(r"^pnpm/action-setup@", re.IGNORECASE)
_JUST = re.compile(r"^(?:extractions/setup-just|taiki-e/install-action@just$)", re.IGNORECASE)
_INSTALL_ACTION = re.compile(r"^taiki-e/install-action@(?P<ref>.+)$", re.IGNORECASE)
_VERSION_INPUTS = ("python-version", "go-version", "toolchain", "node-version", "rust-version")
_REF_VERSION = re.compile(r"^v?\d+(?:\.\d+)*$|^[0-9a-f]{40}$|^(?:main|master)$")
# taiki-e/install-action tool names that are not crate names
_CRATES = {"nextest": "cargo-nextest", "cargo-binstall": "cargo-binstall"}
_SAFE = re.compile(r"^[\w.@+-]+$")


def _versioned(tool: str, version: str | None, pip: bool) -> str:
    if not version or version in ("latest", "*"):
        return tool
    return f"{tool}=={version}" if pip else f"{tool} --version {version}"


def _tool_installs(tools: str) -> list[str]:
    """`cargo install` lines for taiki-e/install-action's `tool` input (`just,cargo-hack@0.6`)."""
    lines = []
    for item in re.split(r"[\s,]+", tools.strip()):
        if not item:
            continue
        name, _, version = item.partition("@")
        if not _SAFE.match(name) or (version and not _SAFE.match(version)):
            continue
        crate = _CRATES.get(name, name)
        lines.append(f"cargo install --locked {_versioned(crate, version or None, pip=False)}")
    return lines


def _pnpm(uses: str, detail: str, inputs: dict[str, str | None]) -> ActionUse:
    """pnpm/action-setup: pnpm at `version` (else the newest), installed with the npm of the
    image's Node (what actions/setup-node stands for); `run_install: true` installs too."""
    version = (inputs.get("version") or "").strip()
    package = "pnpm" if version in ("", "latest", "*") else f"pnpm@{version}"
    lines = [f"npm install -g {shlex.quote(package)}"]
    if (inputs.get("run_install") or "").strip().lower() == "true":
        lines.append("pnpm install")
    note = f"uses {uses}{detail}: installs {package} with npm (Node is the image's)"
    return ActionUse(Effect.INSTALL, note, "\n".join(lines))


def _cargo(uses: str, detail: str, inputs: dict[str, str | None]) -> ActionUse:
    """actions-rs/cargo: `cargo [+toolchain] COMMAND ARGS` as a step (`use-cross` builds for
    another target, which a sandbox cannot run: plain cargo instead, noted)."""
    command = (inputs.get("command") or "").strip()
    if not _SAFE.match(command):
        return ActionUse(Effect.SKIPPED, f"uses {uses}{detail}: no cargo command given (skipped)")
    toolchain = (inputs.get("toolchain") or "").strip()
    plus = f"+{toolchain} " if toolchain and _SAFE.match(toolchain) else ""
    args = (inputs.get("args") or "").strip()
    run = f"cargo {plus}{command} {args}".strip()
    note = f"uses {uses}{detail}: runs `{run}`"
    if (inputs.get("use-cross") or "").strip().lower() == "true":
        note += " (with cargo, not cross: a sandbox runs no other target)"
    return ActionUse(Effect.RUN, note, run=run)


def checks_out_own_repo(uses: str, inputs: dict[str, str | None], repository: object) -> bool:
    """`actions/checkout` of the workflow's own repository: no `repository:` input, one not
    known here, or the repository itself (`repository` is github.repository, if known)."""
    if not _CHECKOUT.match(uses):
        return False
    named = inputs.get("repository", "")
    return not named or named.lower() == str(repository or "").lower()


def use_action(uses: str, inputs: dict[str, str | None]) -> ActionUse:
    """The effect of `uses:` with its `with:` inputs (already substituted; None if not known)."""
    action, _, ref = uses.partition("@")
    shown = ", ".join(f"{k}={v if v is not None else '(not known)'}" for k, v in inputs.items())
    detail = f" with {shown}" if shown else ""
    if _CONDA.match(uses):
        return ActionUse(Effect.CONDA, f"uses {uses}: conda is not supported")
    if _DOCKER.match(uses):
        return ActionUse(Effect.DOCKER, f"uses {uses}: needs Docker in the job")
    if _CHECKOUT.match(uses):
        return ActionUse(Effect.NOOP, f"uses {uses}: the workspace is the checkout")
    if _CACHE.match(uses):
        return ActionUse(Effect.NOOP, f"uses {uses}: a cache, not needed (no-op)")
    if _POETRY.match(uses):
        version = inputs.get("poetry-version") or inputs.get("version")
        command = f"python -m pip install {shlex.quote(_versioned('poetry', version, pip=True))}"
        return ActionUse(Effect.INSTALL, f"uses {uses}{detail}: installs poetry", command)
    if _UV.match(uses):
        command = (
            f"python -m pip install {shlex.quote(_versioned('uv', inputs.get('version'), True))}"
        )
        return ActionUse(Effect.INSTALL, f"uses {uses}{detail}: installs uv", command)
    if _PDM.match(uses):
        command = (
            f"python -m pip install {shlex.quote(_versioned('pdm', inputs.get('version'), True))}"
        )
        return ActionUse(Effect.INSTALL, f"uses {uses}{detail}: installs pdm", command)
    if _CARGO.match(uses):
        return _cargo(uses, detail, inputs)
    if _DOWNLOADS.match(uses):
        name = inputs.get("name") or inputs.get("pattern") or "every artifact"
        return ActionUse(Effect.DOWNLOAD, f"uses {uses}: fetches {name}, built by another job")
    if _NOT_FOR_TESTS.match(uses):
        note = f"uses {uses}: lints, reports or publishes: skipped, a test run needs none of it"
        return ActionUse(Effect.SKIPPED, note)
    if _PNPM.match(uses):
        return _pnpm(uses, detail, inputs)
    if _JUST.match(uses):
        version = inputs.get("just-version") or inputs.get("version")
        command = f"cargo install --locked {_versioned('just', version, pip=False)}"
        return ActionUse(Effect.INSTALL, f"uses {uses}{detail}: installs just", command)
    if found := _INSTALL_ACTION.match(uses):
        tools = inputs.get("tool") or ("" if _REF_VERSION.match(found["ref"]) else found["ref"])
        if lines := _tool_installs(tools or ""):
            note = f"uses {uses}{detail}: installs {tools} with cargo install"
            return ActionUse(Effect.INSTALL, note, "\n".join(lines))
    if _TOOLCHAINS.match(uses):
        requested = next((inputs[k] for k in _VERSION_INPUTS if inputs.get(k)), None)
        if requested is None and action.lower() == "dtolnay/rust-toolchain":
            requested = ref if _RUST_CHANNEL.match(ref) else None  # @stable, @1.75, @nightly
        outputs = {}
        if action.lower() == "actions/setup-python":
            outputs = {"python-path": "python", "python-version": requested or ""}
        elif action.lower() == "actions/setup-go":
            outputs = {"go-version": requested or ""}
        return ActionUse(
            Effect.PROVIDED,
            f"uses {uses}{detail}: provided by the image",
            toolchain_request=requested or None,
            outputs=outputs,
        )
    return ActionUse(Effect.SKIPPED, f"uses {uses}: skipped (cannot run offline)")
