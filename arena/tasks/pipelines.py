"""A task's pipeline: its own, or derived from its repo's workflow job (`ci_name_list`)."""

from __future__ import annotations

from arena.tasks.consistency import patch_paths
from arena.tasks.schema import CandidateLeg, LegChoice, Task, UnsupportedTask
from ci_runner import (
    DerivedJobs,
    Pipeline,
    Refusal,
    WorkflowError,
    Workspaces,
    derive_pipelines,
    github_slug,
    refusal_of,
    request_files,
    toolchain_choice,
)

WORKFLOWS_DIR = ".github/workflows"


def with_pipeline(task: Task, workspaces: Workspaces) -> Task:
    """The task with a pipeline, reading the workflow files at its base commit if needed.

    Every usable leg is kept, best-ranked first, and the best one's pipeline taken; validation
    moves to the next when the gold patch fixes no test on it. Every leg considered and every
    decision taken on the way are kept on the task.
    """
    if task.pipeline is not None:
        return task
    files = workspaces.read_files(task.repo, task.base_commit, WORKFLOWS_DIR)
    workflows = {p: t for p, t in files.items() if p.endswith((".yml", ".yaml"))}
    github = {"sha": task.base_commit}
    if slug := github_slug(task.repo):
        github["repository"] = slug
        github["repository_owner"] = slug.split("/")[0]
    try:
        derived = derive_pipelines(
            workflows,
            list(task.ci_name_list),
            task.language.value,
            read_file=lambda path: workspaces.read_text(task.repo, task.base_commit, path),
            github=github,
            # the tests that judge it: the gold tests, or for a CI-judged task the code the
            # gold patch changes (its tests are beside it)
            gold_paths=sorted(patch_paths(task.test_patch) or patch_paths(task.patch)),
        )
    except WorkflowError as exc:  # its reason is the refusal's category
        raise UnsupportedTask(f"ci_name_list: {exc}", exc.reason) from exc
    touched = patch_paths(task.patch) | patch_paths(task.test_patch)
    legs = list(_legs(derived))
    candidates: list[CandidateLeg] = []
    for c in derived.candidates:
        elsewhere = _tests_elsewhere(c.pipeline, touched)
        if elsewhere is not None:
            legs = [_reject(leg, (c.leg, c.workflow_file), elsewhere) for leg in legs]
            continue
        candidates.append(
            CandidateLeg(
                leg=c.leg,
                workflow=c.workflow_file,
                pipeline=c.pipeline,
                skipped_actions=c.skipped_actions,
                notes=(*derived.notes, *c.notes),
                toolchain_request=c.toolchain_request,
            )
        )
    if not candidates:
        category = refusal_category(legs)
        shown = "; ".join(f"{leg.leg}: {leg.why}" for leg in legs[:6])
        raise UnsupportedTask(f"ci_name_list: no leg can test the gold patch ({shown})", category)
    candidates = _provided_first(candidates, legs, task, workspaces)
    ranked = [leg for leg in legs if leg.status == "candidate"]
    order = {c.key: n for n, c in enumerate(candidates)}
    ranked.sort(key=lambda leg: order.get(leg.key, len(order)))
    ranks = {leg.key: n for n, leg in enumerate(ranked)}
    legs = [leg.model_copy(update={"rank": ranks.get(leg.key)}) for leg in legs]
    legs.sort(key=lambda leg: (leg.rank is None, leg.rank or 0))
    with_legs = task.model_copy(update={"ci_candidates": tuple(candidates), "ci_legs": tuple(legs)})
    return with_legs.on_leg(candidates[0])


OTHER_PART = "tests another part of the repo"


def refusal_category(legs: list[LegChoice]) -> str:
    """The category a task is refused under when none of its legs is usable: legs dropped
    for testing another part of the repo count as Linux test legs."""
    known = {r.value: r for r in Refusal}
    categories = [known[leg.category] for leg in legs if leg.category in known]
    test_like = [known.get(leg.category or "") for leg in legs if leg.why.startswith(OTHER_PART)]
    return refusal_of(categories, [*categories, *test_like]).value


def _provided_first(
    candidates: list[CandidateLeg], legs: list[LegChoice], task: Task, workspaces: Workspaces
) -> list[CandidateLeg]:
    """Among the legs of one job (its matrix), those whose toolchain this machine provides
    exactly come first; the slots each job holds in the ranking stay its own.

    A leg asking Python 3.12 where only 3.11 and 3.13 exist would run its tox `py312` env on
    another interpreter or not at all, while its sibling leg on 3.11 runs as CI ran it.
    """
    files = request_files(lambda name: workspaces.read_text(task.repo, task.base_commit, name))
    jobs = {leg.key: (leg.workflow, leg.job_id) for leg in legs}

    def inexact(c: CandidateLeg) -> bool:
        choice = toolchain_choice(task.language.value, c.toolchain_request, files)
        return bool(choice.deviation)

    ordered = list(candidates)
    for job in dict.fromkeys(jobs.get(c.key) for c in candidates):
        slots = [n for n, c in enumerate(candidates) if jobs.get(c.key) == job]
        members = sorted((candidates[n] for n in slots), key=inexact)  # stable: rank order kept
        for slot, member in zip(slots, members, strict=True):
            ordered[slot] = member
    return ordered


def _tests_elsewhere(pipeline: Pipeline, touched: set[str]) -> str | None:
    """Why a leg cannot test the gold patch: every CI step runs in a folder of the repo
    (a monorepo's other package) that neither gold patch touches; else None."""
    folders = {step.workdir.strip("/") for step in pipeline.steps}
    if not touched or any(f in ("", ".") for f in folders):
        return None
    if any(path == f or path.startswith(f"{f}/") for f in folders for path in touched):
        return None
    return (
        f"{OTHER_PART}: its steps run in {', '.join(sorted(folders))}, the gold patch is elsewhere"
    )


def _reject(leg: LegChoice, key: tuple[str, str], why: str) -> LegChoice:
    if leg.key != key:
        return leg
    return leg.model_copy(update={"status": "rejected", "why": why, "rank": None})


def _legs(derived: DerivedJobs) -> tuple[LegChoice, ...]:
    return tuple(
        LegChoice(
            leg=r.leg,
            workflow=r.workflow,
            job_id=r.job_id,
            status="candidate" if r.kept else "rejected",
            why=r.why,
            category=r.category,
            rank=r.rank,
        )
        for r in derived.considered
    )
