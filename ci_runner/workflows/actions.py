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
    SKIPPED = "skipped"  # anything else: cannot run offline, skipped with a note


@dataclass(frozen=True)
class ActionUse:
    effect: Effect
    note: str
    setup: str | None = None  # the setup command, for INSTALL
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
        if requested is None and action == "dtolnay/rust-toolchain" and ref[:1].isdigit():
            requested = ref
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
