"""One job leg's steps as pipeline steps: expressions substituted, `if:` decided, setup split off.

Setup steps (dependency installs and fetches) go to `Pipeline.setup`, which runs as root with
network when the environment image is built, so `sudo` is dropped from them; the rest run in
every CI run. Every decision is written to `notes`, and nothing unresolved reaches a command.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from ci_runner.job_folder import JOB_FOLDER
from ci_runner.pipeline import Step
from ci_runner.workflows.actions import Effect, checks_out_own_repo, use_action
from ci_runner.workflows.commands import (
    ReadFile,
    drop_sudo,
    installs_local_project,
    is_install,
    is_setup,
    local_project_installs,
    may_be_unreachable,
    named_toolchain,
    only_lints,
    runs_installer,
    split_installs,
    test_runner,
    uses_conda,
    uses_docker,
    without_foreign,
    without_host_only,
)
from ci_runner.workflows.expressions import (
    ExpressionError,
    Unsupported,
    condition,
    interpolate,
    to_text,
)
from ci_runner.workflows.legs import WORKSPACE, Leg
from ci_runner.workflows.yaml12 import load_yaml

_SHELLS = re.compile(r"^(?:bash|sh)(?:\s+[-\w]+)*(?:\s+\{0\})?$")
_PYTHON_SHELL = re.compile(r"^python\d*(?:\s+[-\w]+)*(?:\s+\{0\})?$")
_EXPRESSION_CONTEXTS = re.compile(r"\$\{\{[^}]*\b(secrets|steps|vars)\.")
_LOCAL_ACTION = re.compile(r"^\./(?P<path>[^@]+?)/?$")
_MAX_NESTING = 4


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
    docker: list[str] = field(default_factory=list)  # steps that need Docker in the job
    # steps that fetch artifacts: what another job built, unless the job uploaded them itself
    downloads: list[str] = field(default_factory=list)
    downloads_other_runs: bool = False  # one names another run or workflow (`run-id`...)
    checks_out: bool = False  # a step checks out the workflow's own repository
    # where that checkout goes in the job's folder (`path: src/app`); None: the folder itself
    checkout_path: str | None = None


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
    extra_env: dict[str, str],
) -> Step:
    shell = to_text(raw.get("shell") or defaults.get("shell") or "bash").strip()
    if _PYTHON_SHELL.match(shell):
        raise UnusableStep(f"runs in shell {shell!r} (a Python script), not bash")
    if not _SHELLS.match(shell):
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
        env={**extra_env, **_mapping(raw.get("env"), contexts, "step env")},
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


@dataclass
class _Scope:
    """Where steps are expanded: the job itself, or a local composite action it uses."""

    contexts: dict[str, Any]
    defaults: dict[str, Any]
    env: dict[str, str]  # the calling step's env, for a composite action's steps
    depth: int = 0
    prefix: str = ""  # the calling step's label, for a composite action's steps


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
    raw_steps = leg.job.get("steps") or []
    scope = _Scope({**contexts, "steps": {}}, defaults, {})
    # paths are the job folder's until the end, where they become the repository's
    reader = _in_checkout(read_file, out)
    _expand(raw_steps if isinstance(raw_steps, list) else [], scope, reader, step_timeout_s, out)
    _lints_do_not_stop_tests(out)
    if out.checkout_path is not None:
        out.setup = [_in_job(step, out.checkout_path) for step in out.setup]
        out.steps = [_in_job(step, out.checkout_path) for step in out.steps]
    return out


def _under(path: str, folder: str) -> str | None:
    """`path` relative to `folder` if it lies in it (both relative, normalised), else None."""
    if path == folder:
        return "."
    return path[len(folder) + 1 :] if path.startswith(f"{folder}/") else None


def _in_checkout(read_file: ReadFile, out: LegSteps) -> ReadFile:
    """A reader of the job folder's paths: once the job checks the repository out into a
    subfolder, what lies under it is the repository's file, and nothing else is there."""

    def read(path: str) -> str | None:
        if out.checkout_path is None:
            return read_file(path)
        inner = _under(posixpath.normpath(path), out.checkout_path)
        return None if inner is None else read_file(inner)

    return read


def _in_job(step: Step, checkout_path: str) -> Step:
    """A step of a job that checks out into `checkout_path`: one whose folder is in the
    checkout runs there, in the repository; any other runs in the job's folder."""
    inner = _under(step.workdir, checkout_path)
    if inner is not None:
        return step.model_copy(update={"workdir": inner})
    return step.model_copy(update={"workdir": ".", "job_workdir": step.workdir})


def _checkout_into(
    label: str,
    path: str | None,
    scope: _Scope,
    step_timeout_s: float,
    out: LegSteps,
    taken: set[str],
) -> None:
    """`actions/checkout` of the job's own repository with `path:`: the repository then lies
    in that subfolder of the job's folder, which a step lays out as a link to the workspace
    (in the environment build for the setup steps after it, and in every CI run)."""
    folder = posixpath.normpath((path or "").strip()) if path is not None else None
    if folder is None:
        out.notes.append(f"step {label!r}: its checkout path is not known; the job's folder")
        return
    if folder in ("", ".") or folder.startswith(("/", "../")) or folder == "..":
        return
    if out.checkout_path is not None:
        if folder != out.checkout_path:
            out.notes.append(
                f"step {label!r}: checks out again into {folder!r}; the repository stays "
                f"at {out.checkout_path!r}"
            )
        return
    out.checkout_path = folder
    github = scope.contexts.get("github")
    if isinstance(github, Mapping):
        scope.contexts["github"] = {**github, "workspace": JOB_FOLDER}
    link = f"mkdir -p {shlex.quote(posixpath.dirname(folder) or '.')} && ln -sfn {WORKSPACE} "
    run = link + shlex.quote(folder)
    for target in (out.setup, out.steps):
        name = _unique(label if target is out.steps else f"{label} (layout)", taken)
        target.append(Step(name=name, run=run, timeout_s=step_timeout_s))
        out.order.append(name)
    out.notes.append(
        f"step {label!r}: checks the repository out into {folder!r} of the job's folder "
        f"({JOB_FOLDER}, GITHUB_WORKSPACE), where a link to the workspace stands for it"
    )


def _expand(
    raw_steps: list[Any],
    scope: _Scope,
    read_file: ReadFile,
    step_timeout_s: float,
    out: LegSteps,
    taken: set[str] | None = None,
) -> None:
    taken = set(out.order) if taken is None else taken
    for index, raw in enumerate(raw_steps):
        if not isinstance(raw, dict):
            continue
        label = scope.prefix + to_text(raw.get("name") or raw.get("uses") or f"step {index + 1}")
        contexts = scope.contexts
        try:
            if not condition(raw.get("if"), contexts):
                out.notes.append(f"step {label!r} skipped: its if: ({raw.get('if')}) is false")
                continue
            uses = to_text(raw.get("uses")).strip()
            if uses:
                run = _use(uses, raw, label, scope, read_file, step_timeout_s, out, taken)
                if run is None:
                    continue
                # an action that runs a command (actions-rs/cargo) is that command's step
                named = {"name": label} if not raw.get("name") else {}
                raw = {k: v for k, v in raw.items() if k not in ("uses", "with")}
                raw = {**raw, **named, "run": run}
            if (found := _EXPRESSION_CONTEXTS.search(to_text(raw.get("run")))) is not None:
                out.notes.append(f"step {label!r}: {found[1]}.* read as empty (not known here)")
            step = _step(index, raw, contexts, scope.defaults, step_timeout_s, scope.env)
        except (Unsupported, ExpressionError, UnusableStep) as exc:
            out.notes.append(f"step {label!r} dropped: {exc}")
            continue
        if scope.prefix and not raw.get("name"):
            step = step.model_copy(update={"name": f"{scope.prefix}step-{index + 1}"})
        elif scope.prefix:
            step = step.model_copy(update={"name": f"{scope.prefix}{step.name}"})
        run, foreign = without_foreign(step.run)
        if foreign:
            shown = "; ".join(line[:80] for line in foreign)
            if not run:
                out.notes.append(f"step {step.name!r} dropped: macOS/Windows only ({shown})")
                continue
            out.notes.append(f"step {step.name!r}: macOS/Windows-only lines dropped ({shown})")
        run, host_only = without_host_only(run)
        if host_only:
            shown = "; ".join(line[:80] for line in host_only)
            why = "a container cannot set them, and the tests do not depend on them"
            if not run:
                out.notes.append(f"step {step.name!r} dropped: host settings only ({shown}): {why}")
                continue
            out.notes.append(f"step {step.name!r}: host settings skipped ({shown}): {why}")
        if run != step.run.strip():
            if "brew" in step.run:
                out.notes.append(f"step {step.name!r}: brew installs as Debian packages ({run})")
            step = step.model_copy(update={"run": run})
        if uses_conda(step.run):
            out.conda.append(f"step {step.name!r} runs conda")
            out.notes.append(f"step {step.name!r}: runs conda/mamba: conda is not supported")
        if uses_docker(step.run):
            out.docker.append(f"step {step.name!r} runs docker")
            out.notes.append(f"step {step.name!r}: runs docker: Docker in the job is not provided")
        _place(step, taken, read_file, out)


def _use(
    uses: str,
    raw: dict[str, Any],
    label: str,
    scope: _Scope,
    read_file: ReadFile,
    step_timeout_s: float,
    out: LegSteps,
    taken: set[str],
) -> str | None:
    """Records what the action does; returns the command it runs as a step, if it does."""
    given = raw.get("with") if isinstance(raw.get("with"), dict) else {}
    inputs: dict[str, str | None] = {}
    for key, value in (given or {}).items():
        try:
            inputs[str(key)] = interpolate(to_text(value), scope.contexts)
        except (Unsupported, ExpressionError):
            inputs[str(key)] = None
    if (local := _LOCAL_ACTION.match(uses)) is not None:
        _composite(local["path"], raw, label, inputs, scope, read_file, step_timeout_s, out, taken)
        return None
    use = use_action(uses, inputs)
    out.notes.append(use.note)
    github = scope.contexts.get("github")
    repository = github.get("repository") if isinstance(github, Mapping) else None
    if checks_out_own_repo(uses, inputs, repository):
        out.checks_out = True
        _checkout_into(label, inputs.get("path", ""), scope, step_timeout_s, out, taken)
    step_id = to_text(raw.get("id")).strip()
    if step_id:
        outputs = {k: v for k, v in use.outputs.items()}
        scope.contexts["steps"][step_id] = {
            "outputs": outputs,
            "outcome": "success",
            "conclusion": "success",
        }
    if use.effect is Effect.CONDA:
        out.conda.append(f"uses {uses}")
    elif use.effect is Effect.DOCKER:
        out.docker.append(f"uses {uses}")
    elif use.effect is Effect.SKIPPED:
        out.skipped_actions.append(uses)
    elif use.effect is Effect.DOWNLOAD:
        out.skipped_actions.append(uses)
        out.downloads.append(f"step {label!r} uses {uses}")
        if any(inputs.get(key) for key in ("run-id", "run_id", "workflow")):
            out.downloads_other_runs = True
    elif use.effect is Effect.INSTALL and use.setup:
        name = _unique(label, taken)
        step = Step(name=name, run=use.setup, workdir=".", timeout_s=step_timeout_s)
        out.setup.append(_setup_step(step, name, use.setup, out))
        out.order.append(name)
        out.notes.append(f"step {name!r}: setup, runs once when the environment is built")
    if use.toolchain_request is not None and out.toolchain_request is None:
        out.toolchain_request = use.toolchain_request
    return use.run if use.effect is Effect.RUN else None


def _composite(
    path: str,
    raw: dict[str, Any],
    label: str,
    inputs: dict[str, str | None],
    scope: _Scope,
    read_file: ReadFile,
    step_timeout_s: float,
    out: LegSteps,
    taken: set[str],
) -> None:
    """A local action (`uses: ./.github/actions/x`): a composite one's steps are expanded with
    its inputs (defaults, then the caller's `with:`); any other kind is skipped."""
    uses = f"./{path}"
    if scope.depth >= _MAX_NESTING:
        out.notes.append(f"uses {uses}: skipped (local actions nested too deeply)")
        out.skipped_actions.append(uses)
        return
    text = None
    for name in ("action.yml", "action.yaml"):
        text = read_file(posixpath.normpath(posixpath.join(path, name)))
        if text is not None:
            break
    try:
        action = load_yaml(text) if text is not None else None
    except yaml.YAMLError:
        action = None
    runs = action.get("runs") if isinstance(action, dict) else None
    if (
        not isinstance(action, dict)
        or not isinstance(runs, dict)
        or to_text(runs.get("using")) != "composite"
    ):
        why = "not readable" if action is None else "not a composite action"
        out.notes.append(f"uses {uses}: skipped ({why})")
        out.skipped_actions.append(uses)
        return
    declared = action.get("inputs") if isinstance(action.get("inputs"), dict) else {}
    values: dict[str, Any] = {}
    for key, spec in (declared or {}).items():
        default = spec.get("default") if isinstance(spec, dict) else None
        if default is not None:
            try:
                values[str(key)] = interpolate(to_text(default), scope.contexts)
            except (Unsupported, ExpressionError):
                values[str(key)] = ""
    values.update({k: v if v is not None else "" for k, v in inputs.items()})
    try:
        env = {**scope.env, **_mapping(raw.get("env"), scope.contexts, "step env")}
    except (Unsupported, ExpressionError) as exc:
        out.notes.append(f"uses {uses}: its env ignored: {exc}")
        env = dict(scope.env)
    out.notes.append(f"uses {uses}: a composite action, its steps expanded")
    inner = _Scope(
        contexts={**scope.contexts, "inputs": values, "steps": {}},
        defaults={"working-directory": "."},  # job defaults do not reach an action's steps
        env=env,
        depth=scope.depth + 1,
        prefix=f"{label}: ",
    )
    steps = runs.get("steps")
    _expand(steps if isinstance(steps, list) else [], inner, read_file, step_timeout_s, out, taken)


def _lints_do_not_stop_tests(out: LegSteps) -> None:
    """A lint-only CI step before a test step does not stop the tests (Arena judges tests)."""
    if not out.test_runners:
        return
    last = max(i for i, step in enumerate(out.steps) if step.name in out.test_runners)
    for i, step in enumerate(out.steps[:last]):
        if (
            step.name not in out.test_runners
            and only_lints(step.run)
            and not step.continue_on_error
        ):
            out.steps[i] = step.model_copy(update={"continue_on_error": True})
            out.notes.append(
                f"step {step.name!r}: lints only; its failure does not stop the tests after it"
            )


def _place(step: Step, taken: set[str], read_file: ReadFile, out: LegSteps) -> None:
    if out.toolchain_request is None and (named := named_toolchain(step.run)):
        out.toolchain_request = named  # `cargo +1.75 test`: the leg's toolchain, as asked
        out.notes.append(f"step {step.name!r} names the toolchain {named!r}")

    def installing(command: str) -> bool:
        return is_install(command) or runs_installer(command, step.workdir, read_file)

    if not is_setup(step.run, installing) and (parts := split_installs(step.run, installing)):
        installs, rest = parts
        name = _unique(f"{step.name} (installs)", taken)
        out.setup.append(_setup_step(step, name, drop_sudo(installs), out))
        out.order.append(name)
        out.notes.append(
            f"step {step.name!r}: its leading installs are setup {name!r}, run once when the "
            "environment is built; the rest is a CI step"
        )
        step = step.model_copy(update={"run": rest})
    if is_setup(step.run, installing):
        without_sudo = drop_sudo(step.run)
        name = _unique(step.name, taken)
        out.setup.append(_setup_step(step, name, without_sudo, out))
        out.order.append(name)
        changed = " (sudo dropped: setup runs as root)" if without_sudo != step.run else ""
        out.notes.append(f"step {name!r}: setup, runs once when the environment is built{changed}")
        if not installs_local_project(step.run):
            return
        out.notes.append(f"step {name!r}: installs the project itself, so every CI run does too")
        step = step.model_copy(
            update={"run": local_project_installs(without_sudo), "continue_on_error": False}
        )
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


def _setup_step(step: Step, name: str, run: str, out: LegSteps) -> Step:
    """A setup step; one that fetches from a registry the build may not reach is tried only."""
    update: dict[str, Any] = {"name": name, "run": run}
    if (tool := may_be_unreachable(run)) is not None and not step.continue_on_error:
        update["continue_on_error"] = True
        out.notes.append(
            f"step {name!r}: installs with {tool}, whose registry the build may not reach: "
            "tried, and the build goes on if it fails"
        )
    return step.model_copy(update=update)
