"""Pipelines derived from a repo's GitHub Actions job, resolved the way GitHub Actions would.

Each `ci_name_list` entry is matched against the legs of the named workflow's jobs (matrix
expanded, display names rendered); Linux legs whose steps run tests are preferred, and every
leg considered is recorded with why it was kept or dropped. The chosen leg's steps have their
expressions substituted and their `if:` decided; installs go to `Pipeline.setup`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from ci_runner.errors import CIError
from ci_runner.job_folder import JOB_FOLDER
from ci_runner.languages import profiles
from ci_runner.pipeline import Pipeline, Service, Step
from ci_runner.workflows.commands import ReadFile, only_lints, runner_lines
from ci_runner.workflows.expressions import (
    ExpressionError,
    OpenContext,
    PartialContext,
    Unsupported,
    condition,
    interpolate,
    to_text,
)
from ci_runner.workflows.legs import (
    ANY_JOB,
    WORKSPACE,
    JobRef,
    Leg,
    is_linux,
    job_legs,
    matches,
    needed_jobs,
    pull_request_github,
    same_workflow,
    static_contexts,
)
from ci_runner.workflows.ranking import (
    NOT_TESTS,
    Assessment,
    Purpose,
    assess,
    placement,
    purposes_of_commands,
    purposes_of_text,
)
from ci_runner.workflows.refusals import Refusal, refusal_of
from ci_runner.workflows.reporting import ReportRuleError, report_for
from ci_runner.workflows.scope import gold_scope
from ci_runner.workflows.steps import LegSteps, job_env, leg_steps
from ci_runner.workflows.yaml12 import load_yaml

# what GitHub's runner puts in every step's environment; the GITHUB_* files are not carried over
RUNNER_ENV = {
    "CI": "true",
    "GITHUB_ACTIONS": "true",
    "GITHUB_WORKSPACE": WORKSPACE,
    "RUNNER_OS": "Linux",
    "RUNNER_ARCH": "X64",
    "RUNNER_TEMP": "/tmp",
    "GITHUB_ENV": "/tmp/github_env",
    "GITHUB_PATH": "/tmp/github_path",
    "GITHUB_OUTPUT": "/tmp/github_output",
    "GITHUB_STEP_SUMMARY": "/tmp/github_step_summary",
}


class WorkflowError(CIError):
    """The named job cannot be found or turned into a pipeline; `reason` is what an import
    report counts the task's line under."""

    reason: str = Refusal.UNUSABLE

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        if reason is not None:
            self.reason = reason


class UnsupportedJob(WorkflowError):
    """No listed or fallback leg can give a pipeline, for a reason in a refusal category
    (`Refusal`: Windows or macOS only, needs conda, needs Docker in the job, needs another
    job's artifacts, no test job):
    no leg is dropped silently into a wrong environment, nor a lint job taken instead."""

    reason: str = Refusal.NO_TEST_JOB


@dataclass(frozen=True)
class DerivedPipeline:
    pipeline: Pipeline
    skipped_actions: tuple[str, ...]
    workflow_file: str
    leg: str
    notes: tuple[str, ...]
    toolchain_request: str | None = None  # the toolchain version the job asks for


@dataclass(frozen=True)
class LegRecord:
    """One leg considered, for the task, the import report and the Tasks page."""

    leg: str  # display name as GitHub shows it
    workflow: str  # workflow file path
    job_id: str
    kept: bool  # a usable candidate?
    why: str  # why kept (rank reasons) or rejected
    category: str | None = None  # for a rejected leg: its refusal category (`Refusal`)
    rank: int | None = None  # 0 = best candidate; None when rejected or beyond max_candidates


@dataclass(frozen=True)
class DerivedJobs:
    candidates: tuple[DerivedPipeline, ...]  # usable legs, best first, at most max_candidates
    considered: tuple[LegRecord, ...]  # every leg looked at
    notes: tuple[str, ...]

    @property
    def best(self) -> DerivedPipeline:
        return self.candidates[0]


def _no_file(_: str) -> str | None:
    return None


def _documents(workflows: Mapping[str, str], notes: list[str]) -> dict[str, dict[str, Any]]:
    documents = {}
    for path, text in sorted(workflows.items()):
        try:
            document = load_yaml(text)
        except yaml.YAMLError as exc:
            notes.append(f"{path} is not valid YAML: {exc}")
            continue
        if isinstance(document, dict) and isinstance(document.get("jobs"), dict):
            documents[path] = document
    return documents


_REUSABLE = re.compile(r"^\./(?P<path>\.github/workflows/[^@]+\.ya?ml)$")


def _workflow_legs(
    documents: dict[str, dict[str, Any]], path: str, contexts: dict[str, Any], notes: list[str]
) -> list[Leg]:
    """Every leg of a workflow file; a job calling a reusable workflow of the same repo gives
    the called workflow's legs (with the call's inputs), named as the dataset names them."""
    legs: list[Leg] = []
    own = not _only_called(documents[path])
    for job_id, job in documents[path]["jobs"].items():
        if not isinstance(job, dict) or not (own or "uses" in job):
            continue
        try:
            found = job_legs(path, str(job_id), job, contexts)
        except Unsupported as exc:
            notes.append(f"job {job_id} ({path}): legs not expanded: {exc}")
            continue
        for caller in found:
            if "uses" not in job:
                legs.append(caller)
                continue
            legs.extend(_called_legs(documents, caller, contexts, notes))
    return legs


def _only_called(document: dict[str, Any]) -> bool:
    """The workflow runs only when another calls it (`on: workflow_call` alone): its jobs
    have legs only as called, with the caller's inputs."""
    on = document.get("on")  # YAML 1.2: `on` is a string key
    events = [on] if isinstance(on, str) else list(on) if isinstance(on, list | dict) else []
    return [str(e) for e in events] == ["workflow_call"]


MAX_CALL_DEPTH = 10  # GitHub's limit on nested reusable workflows (the caller's file counts)


def _called_legs(
    documents: dict[str, dict[str, Any]],
    caller: Leg,
    contexts: dict[str, Any],
    notes: list[str],
    depth: int = 1,
) -> list[Leg]:
    """The legs of the workflow `caller` calls, each named by the calling jobs (`outer /
    inner`) and reached from the outermost workflow (`via`); a called workflow's own calls
    are followed too, down to GitHub's nesting limit."""
    uses = to_text(caller.job.get("uses")).strip()
    called = _REUSABLE.match(uses)
    if called is None or called["path"] not in documents:
        notes.append(f"job {caller.job_id} ({caller.workflow}): calls {uses}, not readable here")
        return []
    if depth >= MAX_CALL_DEPTH:
        notes.append(f"job {caller.job_id} ({caller.workflow}): calls nested past GitHub's limit")
        return []
    inputs = _call_inputs(documents[called["path"]], caller, contexts)
    via = caller.via or caller.workflow
    chain = f"{caller.caller} / {caller.display_name}" if caller.caller else caller.display_name
    legs: list[Leg] = []
    for job_id, job in documents[called["path"]]["jobs"].items():
        if not isinstance(job, dict):
            continue
        try:
            inner = job_legs(called["path"], str(job_id), job, {**contexts, "inputs": inputs})
        except Unsupported as exc:
            notes.append(f"job {job_id} ({called['path']}): legs not expanded: {exc}")
            continue
        for leg in inner:
            after = (*caller.called_after, *needed_jobs(caller.job))
            leg = replace(leg, via=via, caller=chain, inputs=inputs, called_after=after)
            if "uses" in job:
                legs.extend(
                    _called_legs(documents, leg, {**contexts, "inputs": inputs}, notes, depth + 1)
                )
            else:
                legs.append(leg)
    return legs


def _call_inputs(called: dict[str, Any], caller: Leg, contexts: dict[str, Any]) -> dict[str, Any]:
    """A reusable workflow's `inputs`: its declared defaults, then the caller's `with:`."""
    on = called.get("on")  # YAML 1.2: `on` is a string key
    call = on.get("workflow_call") if isinstance(on, dict) else None
    declared = call.get("inputs") if isinstance(call, dict) else None
    values: dict[str, Any] = {}
    for key, spec in (declared or {}).items() if isinstance(declared, dict) else ():
        if isinstance(spec, dict) and "default" in spec:
            values[str(key)] = spec["default"]
    given = caller.job.get("with")
    leg_contexts = {**contexts, "matrix": caller.matrix}
    for key, value in (given or {}).items() if isinstance(given, dict) else ():
        try:
            values[str(key)] = interpolate(to_text(value), leg_contexts)
        except (Unsupported, ExpressionError):
            values[str(key)] = ""
    return values


@dataclass
class _Considered:
    leg: Leg
    listed: bool
    order: int
    steps: LegSteps | None = None
    of_listed_job: bool = False  # a matrix sibling of a listed leg: the dataset says it ran
    contexts: dict[str, Any] = field(default_factory=dict)
    why: str = ""
    category: Refusal | None = None
    assessment: Assessment | None = None


def _base_ref(document: dict[str, Any]) -> str:
    """The branch a pull request targets: the workflow's one named `pull_request` branch, or
    `main` (the default branch guess)."""
    on = document.get("on")
    pull_request = on.get("pull_request") if isinstance(on, dict) else None
    branches = pull_request.get("branches") if isinstance(pull_request, dict) else None
    if isinstance(branches, str):
        branches = [branches]
    plain = [b for b in branches or [] if isinstance(b, str) and not re.search(r"[*?!\[]", b)]
    return plain[0] if plain else "main"


def _needs_context(job: dict[str, Any], unknown: set[str] | None = None) -> PartialContext:
    """The `needs` context of a job that runs: each job it needs succeeded (else it would not
    run); their outputs are known only once they ran. Open (`unknown` given: outputs read as
    null and noted) for the job's `if:`; else reading an output is Unsupported, so no step
    runs a command with a value made up."""
    names = needed_jobs(job)
    if unknown is not None:
        jobs = {name: {"result": "success", "outputs": {}} for name in names}
        return OpenContext("needs", jobs, unknown)
    return PartialContext(
        "needs",
        {
            name: {
                "result": "success",
                "outputs": PartialContext(f"needs.{name}.outputs", {}),
            }
            for name in names
        },
    )


def _leg_contexts(document: dict[str, Any], leg: Leg, github: Mapping[str, Any]) -> dict[str, Any]:
    contexts = static_contexts(pull_request_github(github, _base_ref(document)))
    contexts["needs"] = _needs_context(leg.job)
    with_matrix = {**contexts, "matrix": leg.matrix, "inputs": leg.inputs}
    with_matrix["github"]["job"] = leg.job_id
    return {**with_matrix, "env": job_env(document, leg, with_matrix)}


def _consider(
    documents: dict[str, dict[str, Any]],
    item: _Considered,
    github: Mapping[str, Any],
    read_file: ReadFile,
    step_timeout_s: float,
    notes: list[str],
) -> None:
    """Decide whether the leg is usable; fill its steps, why, and category when rejected."""
    leg = item.leg
    document = documents[leg.workflow]
    if not is_linux(leg.runs_on, leg.job):
        item.why = f"dropped: runs on {leg.runs_on or 'an unknown runner'}, not Linux"
        item.category = Refusal.WINDOWS_MACOS
        return
    try:
        item.contexts = _leg_contexts(document, leg, github)
        condition_text = leg.job.get("if")
        if condition_text is not None:
            opened = _needs_context(leg.job, item.contexts["github"].unknown)
            holds = condition(condition_text, {**item.contexts, "needs": opened})
            if item.listed:
                verdict = "holds" if holds else "reads false here"
                notes.append(
                    f"leg {leg}: the job's if: ({condition_text}) {verdict}; the job is "
                    "listed, so it ran on the pull request: kept"
                )
            elif not holds:
                item.why = f"dropped: the job's if: ({condition_text}) is false"
                item.category = Refusal.NO_TEST_JOB
                return
    except (Unsupported, ExpressionError) as exc:
        item.why = f"dropped: {exc}"
        item.category = Refusal.UNUSABLE
        return
    steps = leg_steps(leg, item.contexts, read_file, step_timeout_s, document.get("defaults"))
    unknown = sorted(item.contexts["github"].unknown)
    if unknown:
        steps.notes.append(f"{', '.join(unknown)} not known before the run: read as null")
    container = leg.job.get("container")
    if isinstance(container, dict) and container.get("credentials"):
        steps.docker.append(f"the job's container ({container.get('image')}) is private")
    elif container:
        shown = container.get("image") if isinstance(container, dict) else container
        steps.notes.append(f"the job's container ({shown}) is not used; the CI image is")
    if services := leg.job.get("services"):
        shown = ", ".join(map(str, services)) if isinstance(services, dict) else str(services)
        steps.notes.append(f"the job's services ({shown}) run beside the job, as localhost")
    item.steps = steps
    if steps.conda:
        item.why = f"{CONDA_DROPPED} ({'; '.join(steps.conda)}), which Arena does not support"
        item.category = Refusal.CONDA
    elif steps.docker:
        item.why = f"dropped: needs Docker in the job ({'; '.join(steps.docker)})"
        item.category = Refusal.DOCKER
    elif not steps.steps:
        skipped = f" (skipped: {', '.join(steps.skipped_actions)})" if steps.skipped_actions else ""
        item.why = f"dropped: no run: step is left for a CI run{skipped}"
        item.category = Refusal.NO_TEST_JOB


CONDA_DROPPED = "dropped: needs conda"


def _gather(
    documents: dict[str, dict[str, Any]],
    refs: Sequence[JobRef],
    notes: list[str],
) -> tuple[list[Leg], dict[str, list[Leg]], bool]:
    """The legs the entries name, every leg of each workflow file, and whether the entries
    name no particular job (`ANY_JOB`)."""
    contexts = static_contexts(pull_request_github({}))
    every = {path: _workflow_legs(documents, path, contexts, notes) for path in documents}
    listed: list[Leg] = []
    seen: set[tuple[str, str, str, str | None]] = set()
    any_job = any(r.name == ANY_JOB for r in refs)
    for ref in refs:
        if ref.name == ANY_JOB:
            continue
        files = [
            p
            for p in documents
            if ref.workflow is None
            or same_workflow(ref.workflow, p)
            or any(same_workflow(ref.workflow, leg.workflow) for leg in every[p])
        ]
        if not files:
            notes.append(f"entry {str(ref)!r}: no such workflow file with jobs")
            continue
        found = False
        for path in files:
            for leg in every[path]:
                if matches(leg, ref):
                    found = True
                    key = (leg.workflow, leg.job_id, leg.display_name, leg.caller)
                    if key not in seen:
                        seen.add(key)
                        listed.append(leg)
        if not found:
            notes.append(f"entry {str(ref)!r}: no job leg has this name")
    return listed, every, any_job


def _job_key(leg: Leg) -> tuple[str, str, str | None, str | None]:
    """Which job a leg is of: legs of one job differ only in their matrix values."""
    return (leg.workflow, leg.job_id, leg.via, leg.caller)


def _fallback_files(
    documents: dict[str, dict[str, Any]], listed: list[Leg], refs: Sequence[JobRef], any_job: bool
) -> list[str]:
    """Where fallback legs come from: every workflow for `ANY_JOB`, else the files the listed
    legs (or their callers) are in, or the entries name; never an unnamed workflow."""
    if any_job:
        return list(documents)
    files = {leg.workflow for leg in listed} | {leg.via for leg in listed if leg.via}
    named = [r.workflow for r in refs if r.workflow is not None]
    files |= {p for p in documents if any(same_workflow(n, p) for n in named)}
    return sorted(files)


def derive_pipelines(
    workflows: Mapping[str, str],
    refs: Sequence[JobRef | str],
    language: str,
    *,
    read_file: ReadFile = _no_file,
    github: Mapping[str, Any] | None = None,
    step_timeout_s: float = 1800,
    max_candidates: int = 8,
    gold_paths: Sequence[str] = (),
) -> DerivedJobs:
    """Every usable leg the entries name, ranked by how likely it runs the project's tests
    (see `ranking`), as pipelines; raises `UnsupportedJob` (reason: its `Refusal` category)
    when there is none, or `WorkflowError` when the workflows cannot be read.

    Listed legs come first; the other Linux legs of every listed job, and, when
    no listed leg is usable (or the entries name none), every other leg of the same workflow
    files (all of them for `ANY_JOB`) are considered too, as fallbacks. `github` completes the
    context of a pull request from a fork (`repository`, `sha`...). `gold_paths`, the files
    the gold tests touch, rank legs whose test commands reach them first (`scope`).
    """
    notes: list[str] = []
    documents = _documents(workflows, notes)
    job_refs = [JobRef(r) if isinstance(r, str) else r for r in refs]
    given = {k: v for k, v in (github or {}).items() if k != "event_name"}
    listed, every, any_job = _gather(documents, job_refs, notes)
    items: list[_Considered] = []
    seen: set[tuple[str, str, str, str | None]] = set()

    def consider(leg: Leg, is_listed: bool, of_listed_job: bool = False) -> None:
        key = (leg.workflow, leg.job_id, leg.display_name, leg.caller)
        if key in seen:
            return
        seen.add(key)
        item = _Considered(
            leg=leg, listed=is_listed, order=len(items), of_listed_job=is_listed or of_listed_job
        )
        _consider(documents, item, given, read_file, step_timeout_s, notes)
        if item.category is None and item.steps is not None:
            if remote := _remote_tests(item.steps):
                item.why = f"dropped: runs its tests on another machine ({remote})"
                item.category = Refusal.NO_TEST_JOB
            elif leg.job.get("needs") and not item.steps.checks_out:
                item.why = (
                    "dropped: needs other jobs and never checks out the repository: it handles "
                    "their results (reports, notifications) and tests nothing itself"
                )
                item.category = Refusal.NO_TEST_JOB
            elif item.steps.downloads and _fetches_built(item) and _tests_something(item):
                item.why = (
                    f"dropped: runs on another job's artifacts ({'; '.join(item.steps.downloads)}"
                    "), which a job run alone does not have"
                )
                item.category = Refusal.ARTIFACTS
            else:
                item.assessment = _assess(item, language, list(gold_paths), read_file)
        items.append(item)

    for leg in listed:
        consider(leg, True)
    # every other Linux leg of a listed job (its matrix): the dataset lists the legs that ran,
    # which may all ask for a toolchain or OS this machine lacks while a sibling does not
    for item in list(items):
        if item.listed:
            job = _job_key(item.leg)
            for leg in every.get(item.leg.via or item.leg.workflow, []):
                if _job_key(leg) == job and is_linux(leg.runs_on, leg.job):
                    consider(leg, False, of_listed_job=True)
    # no listed leg runs recognised tests, and none because it needs conda or Docker (then
    # that is why): the other legs of the same files may (the job whose results a listed
    # report job reads)
    # (another job's artifacts are no such reason: the job that built them may test)
    needs = {Refusal.CONDA, Refusal.DOCKER}
    test_like = [i for i in items if i.assessment is not None and i.assessment.tier < 2]
    if any_job or (not test_like and not any(i.category in needs for i in items)):
        for path in _fallback_files(documents, listed, job_refs, any_job):
            for leg in every.get(path, []):
                if is_linux(leg.runs_on, leg.job):
                    consider(leg, False)
    # no leg considered reaches the gold tests: the repo's other workflows may (its unit
    # tests in a workflow the dataset did not list); they rank as fallbacks, by evidence.
    # Where a leg that tests needs conda or Docker, that stays the reason unless one of them
    # reaches the gold tests: then only those are added
    if gold_paths and not any(_reaches_gold(i) for i in items):
        needing = any(i.category in needs for i in items)
        before = len(items)
        for path in documents:
            for leg in every.get(path, []):
                if is_linux(leg.runs_on, leg.job):
                    consider(leg, False)
        if needing:
            items[before:] = [i for i in items[before:] if _reaches_gold(i)]
    return _ranked(
        _natives_first(items), job_refs, workflows, language, notes, max_candidates, read_file
    )


_NEEDS = frozenset({Refusal.CONDA, Refusal.DOCKER, Refusal.ARTIFACTS})
# what the legs that run the tests need, as a reason for setting the others aside
_NEEDED = {
    Refusal.CONDA: "need conda",
    Refusal.DOCKER: "need Docker",
    Refusal.ARTIFACTS: "run on another job's artifacts",
}


def _reaches_gold(item: _Considered) -> bool:
    """The leg is kept, and its test commands reach the files the gold tests touch."""
    return item.assessment is not None and item.assessment.reaches_gold


def _fetches_built(item: _Considered) -> bool:
    """A download of the leg's comes from another job: one of this run that ran before it
    (only a job it waits for can have uploaded it) or one of another run."""
    assert item.steps is not None
    return item.leg.runs_after_others or item.steps.downloads_other_runs


def _tests_something(item: _Considered) -> bool:
    """The leg runs a recognised test runner, or its name or commands say it tests."""
    steps = item.steps
    if steps is None:
        return False
    said = purposes_of_text(f"{item.leg.display_name} {item.leg.job_id}")
    said |= purposes_of_commands([s.run for s in steps.steps])
    return bool(steps.test_runners) or Purpose.TESTS in said


def _natives_first(items: list[_Considered]) -> list[_Considered]:
    """A job reached both on its own and through a workflow calling it (a nightly workflow
    that `uses:` the main one) is the same leg: the one run on its own stays."""
    native = {
        (i.leg.workflow, i.leg.job_id, i.leg.display_name) for i in items if i.leg.caller is None
    }
    return [
        i
        for i in items
        if i.leg.caller is None or (i.leg.workflow, i.leg.job_id, i.leg.display_name) not in native
    ]


def _ranked(
    items: list[_Considered],
    refs: Sequence[JobRef],
    workflows: Mapping[str, str],
    language: str,
    notes: list[str],
    max_candidates: int,
    read_file: ReadFile,
) -> DerivedJobs:
    for item in items:
        # fallbacks are weighed to find the tests: one that runs no recognised test (a job
        # baking images, tending the repository) is no evidence of any
        if not item.of_listed_job and item.assessment is not None and item.assessment.tier >= 2:
            item.why = f"dropped: a fallback that runs no recognised test ({item.assessment.why})"
            item.category, item.assessment = Refusal.NO_TEST_JOB, None
    kept = [i for i in items if i.assessment is not None]
    ordered = sorted(kept, key=lambda i: i.assessment.key if i.assessment else ())
    blocked = [i for i in items if i.category in _NEEDS and _tests_something(i)]
    if blocked and all(i.assessment is not None and i.assessment.tier >= 2 for i in kept):
        # the legs that run the tests need conda, Docker or another job's artifacts: that is
        # why the line cannot run, not a leg that runs no test Arena recognises (its
        # validation would say "no test ran", as if Arena had failed it)
        category = blocked[0].category
        assert category is not None  # in _NEEDS
        needed = _NEEDED[category]
        for item in kept:
            item.category = category
            item.why = f"set aside: runs no recognised test, and the legs that do {needed}"
        ordered = []
    if all(i.assessment is not None and i.assessment.tier == 3 for i in ordered):
        for item in ordered:  # never a lint or docs job alone
            item.category = Refusal.NO_TEST_JOB
            item.why = f"dropped: {item.assessment.why if item.assessment else ''}; no test leg"
        ordered = []
    ranks = {id(item): rank for rank, item in enumerate(ordered)}
    considered = []
    for item in items:
        rank = ranks.get(id(item))
        if rank is not None and item.assessment is not None:
            linux = f"Linux ({item.leg.runs_on})" if item.leg.runs_on else "Linux"
            item.why = f"kept: {linux}: {item.assessment.why}"
        considered.append(
            LegRecord(
                leg=item.leg.display_name,
                workflow=item.leg.workflow,
                job_id=item.leg.job_id,
                kept=rank is not None,
                why=item.why,
                category=None if rank is not None else item.category,
                rank=rank if rank is not None and rank < max_candidates else None,
            )
        )
        ranked = "" if rank is None else f" (rank {rank})"
        notes.append(f"leg {item.leg}{ranked}: {item.why}")
    if not ordered:
        raise _refusal(items, refs, workflows, notes)
    candidates = tuple(
        _pipeline(item, language, notes, read_file) for item in ordered[:max_candidates]
    )
    return DerivedJobs(candidates=candidates, considered=tuple(considered), notes=tuple(notes))


_REMOTE = re.compile(r"(?:^|[\s;&|(])(?:ssh|sshpass)\s+\S")


def _remote_tests(steps: LegSteps) -> str | None:
    """The ssh line a test step runs its tests through, on a machine a sandbox never reaches."""
    for step in steps.steps:
        if step.name in steps.test_runners and (found := _REMOTE.search(step.run)):
            line = step.run[found.start() :].strip().splitlines()[0]
            return line[:80]
    return None


def _assess(
    item: _Considered, language: str, gold_paths: list[str], read_file: ReadFile
) -> Assessment:
    assert item.steps is not None
    steps, leg = item.steps, item.leg
    lines = [
        line
        for s in steps.steps
        if s.name in steps.test_runners
        for line in runner_lines(s.run, s.workdir, read_file)
    ]
    scope = gold_scope(lines, gold_paths, read_file)
    names = " ".join(
        [leg.display_name, leg.job_id, *(to_text(v) for v in leg.matrix.values())]
        + ([leg.caller] if leg.caller else [])
    )
    if steps.steps and all(only_lints(s.run) for s in steps.steps):
        names += " lint"  # every step only lints, formats or type-checks
    toxenv = item.contexts["env"].get("TOXENV")
    runner_runs = [s.run for s in steps.steps if s.name in steps.test_runners]
    toxenvs = [s.env["TOXENV"] for s in steps.steps if "TOXENV" in s.env]
    toxenvs += [toxenv] if toxenv else []
    return assess(
        names=names,
        runner_runs=runner_runs + [f"TOXENV={env}" for env in toxenvs],
        other_runs=[s.run for s in steps.steps if s.name not in steps.test_runners],
        runners=list(steps.test_runners.values()),
        language=language,
        fallback=not item.listed,
        version=steps.toolchain_request or _matrix_version(leg.matrix),
        order=item.order,
        evidence=int(scope.evidence),
        evidence_why=scope.why,
        place=placement(names, gold_paths),
    )


_LEADS = {
    Refusal.CONDA: "the Linux test job among {} needs conda, which Arena does not support",
    Refusal.DOCKER: "the Linux test job among {} needs Docker in the job, which Arena does "
    "not provide",
    Refusal.ARTIFACTS: "the Linux test job among {} runs on what another job built, which "
    "Arena does not run before it",
    Refusal.WINDOWS_MACOS: "every test job among {} runs on Windows or macOS, not Linux",
}


def _refusal(
    items: list[_Considered],
    refs: Sequence[JobRef],
    workflows: Mapping[str, str],
    notes: list[str],
) -> WorkflowError:
    known = ", ".join(sorted(workflows)) or "no workflow files"
    wanted = ", ".join(str(r) for r in refs) or "(no job named)"
    if not items:
        detail = "; ".join(notes[-6:]) or "nothing matched"
        return WorkflowError(f"no job leg among {wanted} in {known}: {detail}")
    categories = [i.category for i in items if i.category is not None]
    listed_test_like = [
        i.category
        for i in items
        if i.listed
        and (
            bool(i.steps and i.steps.test_runners)
            or not purposes_of_text(f"{i.leg.display_name} {i.leg.job_id}") & NOT_TESTS
        )
    ]
    category = refusal_of(categories, listed_test_like)
    if category in _LEADS:
        shown = [f"leg {i.leg}: {i.why}" for i in items if i.category is category][:3]
        return UnsupportedJob(f"{_LEADS[category].format(wanted)}: {'; '.join(shown)}", category)
    shown = [f"leg {i.leg}: {i.why}" for i in items][:6]
    message = f"no usable Linux test job among {wanted} in {known}: {'; '.join(shown)}"
    if category is Refusal.UNUSABLE:
        return WorkflowError(message)
    return UnsupportedJob(message, category)


def _pipeline(
    item: _Considered, language: str, shared: list[str], read_file: ReadFile
) -> DerivedPipeline:
    assert item.steps is not None
    leg, steps = item.leg, item.steps
    notes = [*shared, f"chosen: leg {leg}"]
    notes.extend(f"  {note}" for note in steps.notes)
    setup, ci_steps = _through_last_test(steps, notes)
    try:
        reporting = report_for(language, ci_steps, steps.test_runners, notes, setup, read_file)
    except ReportRuleError as exc:
        raise WorkflowError(str(exc)) from exc
    env = {**RUNNER_ENV, **item.contexts["env"]}
    if steps.checkout_path is not None:  # the job's folder, where the checkout is a subfolder
        env["GITHUB_WORKSPACE"] = JOB_FOLDER
    for key, value in reporting.env.items():
        env[key] = f"{env[key]} {value}" if key in reporting.appended and key in env else value
    services = _services(leg.job.get("services"), item.contexts, notes)
    pipeline = Pipeline(
        steps=tuple(reporting.steps),
        report=reporting.report,
        env=env,
        setup=tuple(setup),
        services=services,
        checkout_path=steps.checkout_path,
    )
    return DerivedPipeline(
        pipeline=pipeline,
        skipped_actions=tuple(steps.skipped_actions),
        workflow_file=leg.workflow,
        leg=leg.display_name,
        notes=tuple(notes),
        toolchain_request=steps.toolchain_request or _matrix_version(leg.matrix),
    )


def _services(block: Any, contexts: dict[str, Any], notes: list[str]) -> dict[str, Service]:
    """The job's `services:` (image, env, ports), expressions rendered as for its steps; one
    that cannot be read is left out with a note (its CI runs then fail where they need it)."""
    services: dict[str, Service] = {}
    for name, raw in (block or {}).items() if isinstance(block, dict) else ():
        spec: dict[str, Any] = {"image": raw} if isinstance(raw, str) else raw
        try:
            rendered = {
                "image": interpolate(to_text(spec.get("image", "")), contexts),
                "env": {
                    str(k): interpolate(to_text(v), contexts)
                    for k, v in (spec.get("env") or {}).items()
                },
                "ports": [interpolate(to_text(p), contexts) for p in spec.get("ports") or []],
            }
            services[str(name)] = Service.model_validate(rendered)
        except (AttributeError, ValueError, Unsupported, ExpressionError) as exc:
            notes.append(f"  service {name!r} left out: {exc}")
    return services


def derive_pipeline(
    workflows: Mapping[str, str],
    refs: Sequence[JobRef | str],
    language: str,
    *,
    read_file: ReadFile = _no_file,
    github: Mapping[str, Any] | None = None,
    step_timeout_s: float = 1800,
) -> DerivedPipeline:
    """The best candidate of `derive_pipelines`; raises WorkflowError if there is none."""
    return derive_pipelines(
        workflows,
        refs,
        language,
        read_file=read_file,
        github=github,
        step_timeout_s=step_timeout_s,
        max_candidates=1,
    ).best


def _matrix_version(matrix: dict[str, Any]) -> str | None:
    """A version the matrix names when no setup action says it (e.g. `matrix.python`): under
    a key of a language's profile (`matrix_keys`), else `toolchain`."""
    for key in (*(k for p in profiles() for k in p.matrix_keys), "toolchain"):
        value = matrix.get(key)
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            text = str(value).strip()
            if text[:1].isdigit() or text in ("stable", "nightly", "beta"):
                return text
    return None


def _through_last_test(steps: LegSteps, notes: list[str]) -> tuple[list[Step], list[Step]]:
    """Steps after the last one that runs tests (uploads, reports) only add ways to fail;
    when no step is recognised as running tests, every step is the job's own and is kept."""
    if not steps.test_runners:
        return list(steps.setup), list(steps.steps)
    last = max(i for i, name in enumerate(steps.order) if name in steps.test_runners)
    after = set(steps.order[last + 1 :])
    for name in steps.order[last + 1 :]:
        notes.append(f"  step {name!r} dropped: it runs after the last test step")
    return (
        [s for s in steps.setup if s.name not in after],
        [s for s in steps.steps if s.name not in after],
    )


__all__ = [
    "ANY_JOB",
    "DerivedJobs",
    "DerivedPipeline",
    "JobRef",
    "LegRecord",
    "Refusal",
    "UnsupportedJob",
    "WorkflowError",
    "derive_pipeline",
    "derive_pipelines",
]
