"""One job leg's steps as pipeline steps: expressions substituted, `if:` decided, setup split off.

Setup steps (dependency installs and fetches) go to `Pipeline.setup`, which runs as root with
network when the environment image is built, so `sudo` is dropped from them; the rest run in
every CI run. Every decision is written to `notes`, and nothing unresolved reaches a command.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from ci_runner.pipeline import Step
from ci_runner.workflows.commands import (
    ReadFile,
    drop_sudo,
    installs_local_project,
    is_setup,
    split_installs,
    test_runner,
    uses_conda,
)
from ci_runner.workflows.expressions import (
    ExpressionError,
    Unsupported,
    condition,
    interpolate,
    to_text,
)
from ci_runner.workflows.legs import Leg

WORKSPACE = "/workspace"
_PROVIDED = re.compile(
    r"^actions/(checkout|setup-[a-z]+|cache)@|^[\w-]+/setup-[\w-]+@|^dtolnay/rust-toolchain@"
    r"|^Swatinem/rust-cache@|^actions-rs/toolchain@"
)
# actions that set up a conda environment: Arena has no conda, so the leg cannot run as written
_CONDA_ACTIONS = re.compile(
    r"^[\w-]+/(?:setup-(?:mini|micro)?conda|setup-micromamba|provision-with-micromamba)@",
    re.IGNORECASE,
)
_BASH = re.compile(r"^(?:bash|sh)(?:\s+[-\w]+)*(?:\s+\{0\})?$")
_EXPRESSION_CONTEXTS = re.compile(r"\$\{\{[^}]*\b(secrets|steps|vars)\.")


class UnusableStep(ValueError):
    """A step that cannot be turned into a command: the job leg may still be usable without it."""


@dataclass
class LegSteps:
    setup: list[Step] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    test_runners: dict[str, str] = field(default_factory=dict)  # step name -> runner
    order: list[str] = field(default_factory=list)  # every step name, setup or not, in order
    skipped_actions: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    toolchain_request: str | None = None  # the version a setup action asks for
    conda: list[str] = field(default_factory=list)  # steps that need conda (unsupported)


def _mapping(block: Any, contexts: dict[str, Any], what: str) -> dict[str, str]:
    if block is None:
        return {}
    if not isinstance(block, dict):
        raise Unsupported(f"{what} is not a mapping")
    out: dict[str, str] = {}
    for key, value in block.items():
        out[str(key)] = interpolate(to_text(value), {**contexts, "env": {**contexts["env"], **out}})
    return out


def job_env(document: dict[str, Any], leg: Leg, contexts: dict[str, Any]) -> dict[str, str]:
    """The workflow's and the job's `env`, each value substituted with what came before it."""
    workflow_env = _mapping(document.get("env"), {**contexts, "env": {}}, "workflow env")
    job_contexts = {**contexts, "env": workflow_env}
    return {**workflow_env, **_mapping(leg.job.get("env"), job_contexts, "job env")}


def _workdir(value: Any, default: str, contexts: dict[str, Any]) -> str:
    text = interpolate(to_text(value), contexts) if value is not None else default
    text = text.replace("$GITHUB_WORKSPACE", WORKSPACE).replace("${GITHUB_WORKSPACE}", WORKSPACE)
    if text == WORKSPACE or text.startswith(f"{WORKSPACE}/"):
        text = text[len(WORKSPACE) :].lstrip("/") or "."
    normal = posixpath.normpath(text)
    if normal.startswith(("/", "../")) or normal == "..":
        raise UnusableStep(f"working-directory {text!r} is outside the checkout")
    return normal


def _number(value: Any, contexts: dict[str, Any]) -> float | None:
    if value is None:
        return None
    text = interpolate(to_text(value), contexts) if isinstance(value, str) else to_text(value)
    try:
        return float(text)
    except ValueError as exc:
        raise UnusableStep(f"timeout-minutes {text!r} is not a number") from exc


def _step(
    index: int,
    raw: dict[str, Any],
    contexts: dict[str, Any],
    defaults: dict[str, Any],
    step_timeout_s: float,
) -> Step:
    shell = to_text(raw.get("shell") or defaults.get("shell") or "bash").strip()
    if not _BASH.match(shell):
        raise UnusableStep(f"runs in shell {shell!r}, not bash")
    run = interpolate(to_text(raw.get("run")), contexts).strip()
    if not run:
        raise UnusableStep("its run: is empty")
    minutes = _number(raw.get("timeout-minutes"), contexts)
    keep_going = raw.get("continue-on-error", False)
    if isinstance(keep_going, str):
        keep_going = condition(keep_going, contexts)
    return Step(
        name=to_text(interpolate(to_text(raw.get("name") or ""), contexts)) or f"step-{index + 1}",
        run=run,
        env=_mapping(raw.get("env"), contexts, "step env"),
        workdir=_workdir(raw.get("working-directory"), defaults["working-directory"], contexts),
        timeout_s=minutes * 60 if minutes else step_timeout_s,
        continue_on_error=bool(keep_going),
    )


def _unique(name: str, taken: set[str]) -> str:
    while name in taken:
        name += "'"
    taken.add(name)
    return name


def _run_defaults(block: Any) -> dict[str, Any]:
    run = block.get("run") if isinstance(block, dict) else None
    return {k: v for k, v in run.items() if v is not None} if isinstance(run, dict) else {}


def leg_steps(
    leg: Leg,
    contexts: dict[str, Any],
    read_file: ReadFile,
    step_timeout_s: float,
    workflow_defaults: Any = None,
) -> LegSteps:
    """The leg's steps, split into setup and CI steps, with a note for each decision."""
    out = LegSteps()
    defaults = {**_run_defaults(workflow_defaults), **_run_defaults(leg.job.get("defaults"))}
    try:
        defaults["working-directory"] = _workdir(defaults.get("working-directory"), ".", contexts)
    except (Unsupported, ExpressionError, UnusableStep) as exc:
        out.notes.append(f"defaults.run.working-directory ignored: {exc}")
        defaults["working-directory"] = "."
    taken: set[str] = set()
    raw_steps = leg.job.get("steps") or []
    for index, raw in enumerate(raw_steps if isinstance(raw_steps, list) else []):
        if not isinstance(raw, dict):
            continue
        label = to_text(raw.get("name") or raw.get("uses") or f"step {index + 1}")
        step_contexts = contexts
        try:
            if not condition(raw.get("if"), step_contexts):
                out.notes.append(f"step {label!r} skipped: its if: ({raw.get('if')}) is false")
                continue
            uses = to_text(raw.get("uses"))
            if uses and _CONDA_ACTIONS.match(uses):
                out.conda.append(f"uses {uses}")
                out.notes.append(f"step {label!r}: uses {uses}: conda is not supported")
                continue
            if uses:
                _note_action(uses, raw, step_contexts, out)
                continue
            if (found := _EXPRESSION_CONTEXTS.search(to_text(raw.get("run")))) is not None:
                out.notes.append(f"step {label!r}: {found[1]}.* read as empty (not known here)")
            step = _step(index, raw, step_contexts, defaults, step_timeout_s)
        except (Unsupported, ExpressionError, UnusableStep) as exc:
            out.notes.append(f"step {label!r} dropped: {exc}")
            continue
        if uses_conda(step.run):
            out.conda.append(f"step {step.name!r} runs conda")
            out.notes.append(f"step {step.name!r}: runs conda/mamba: conda is not supported")
        _place(step, taken, read_file, out)
    return out


def _note_action(uses: str, raw: dict[str, Any], contexts: dict[str, Any], out: LegSteps) -> None:
    if _PROVIDED.match(uses):
        inputs = raw.get("with") if isinstance(raw.get("with"), dict) else {}
        shown = []
        for key, value in (inputs or {}).items():
            try:
                shown.append(f"{key}={interpolate(to_text(value), contexts)}")
            except (Unsupported, ExpressionError):
                shown.append(f"{key}=(not known)")
        detail = f" with {', '.join(shown)}" if shown else ""
        out.notes.append(f"uses {uses}{detail}: provided by the image")
        requested = _requested_version(uses, inputs or {}, contexts)
        if requested is not None and out.toolchain_request is None:
            out.toolchain_request = requested
    else:
        out.skipped_actions.append(uses)
        out.notes.append(f"uses {uses}: skipped (cannot run offline)")


_VERSION_INPUTS = ("python-version", "go-version", "toolchain")


def _requested_version(uses: str, inputs: dict[str, Any], contexts: dict[str, Any]) -> str | None:
    """The toolchain version a setup action is asked for (`python-version: 3.12`,
    `go-version`, dtolnay/rust-toolchain's `toolchain` input or its `@1.70` ref)."""
    for key in _VERSION_INPUTS:
        if key in inputs:
            try:
                value = interpolate(to_text(inputs[key]), contexts).strip()
            except (Unsupported, ExpressionError):
                return None
            return value or None
    action, _, ref = uses.partition("@")
    if action == "dtolnay/rust-toolchain" and ref[:1].isdigit():
        return ref
    return None


def _place(step: Step, taken: set[str], read_file: ReadFile, out: LegSteps) -> None:
    if not is_setup(step.run) and (parts := split_installs(step.run)) is not None:
        installs, rest = parts
        name = _unique(f"{step.name} (installs)", taken)
        out.setup.append(step.model_copy(update={"name": name, "run": drop_sudo(installs)}))
        out.order.append(name)
        out.notes.append(
            f"step {step.name!r}: its leading installs are setup {name!r}, run once when the "
            "environment is built; the rest is a CI step"
        )
        step = step.model_copy(update={"run": rest})
    if is_setup(step.run):
        without_sudo = drop_sudo(step.run)
        name = _unique(step.name, taken)
        out.setup.append(step.model_copy(update={"name": name, "run": without_sudo}))
        out.order.append(name)
        changed = " (sudo dropped: setup runs as root)" if without_sudo != step.run else ""
        out.notes.append(f"step {name!r}: setup, runs once when the environment is built{changed}")
        if not installs_local_project(step.run):
            return
        out.notes.append(f"step {name!r}: installs the project itself, so every CI run does too")
        step = step.model_copy(update={"run": without_sudo})
    run = drop_sudo(step.run)
    name = _unique(step.name, taken)
    if run != step.run:
        out.notes.append(f"step {name!r}: sudo dropped (CI runs are unprivileged)")
    step = step.model_copy(update={"name": name, "run": run})
    out.steps.append(step)
    out.order.append(name)
    if runner := test_runner(run, step.workdir, read_file):
        out.test_runners[name] = runner
        out.notes.append(f"step {name!r}: runs tests ({runner})")
    else:
        out.notes.append(f"step {name!r}: CI step")
