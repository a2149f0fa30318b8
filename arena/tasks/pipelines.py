"""A task's pipeline: its own, or derived from its repo's workflow job (`ci_name_list`)."""

from __future__ import annotations

from arena.tasks.schema import Task, TaskError
from ci_runner.workflows import WorkflowError, derive_pipeline
from ci_runner.workspace import Workspaces

WORKFLOWS_DIR = ".github/workflows"


def with_pipeline(task: Task, workspaces: Workspaces) -> Task:
    """The task with a pipeline, reading the workflow files at its base commit if needed."""
    if task.pipeline is not None:
        return task
    files = workspaces.read_files(task.repo, task.base_commit, WORKFLOWS_DIR)
    workflows = {p: t for p, t in files.items() if p.endswith((".yml", ".yaml"))}
    try:
        derived = derive_pipeline(workflows, list(task.ci_name_list), task.language.value)
    except WorkflowError as exc:
        raise TaskError(f"ci_name_list: {exc}") from exc
    return task.model_copy(
        update={"pipeline": derived.pipeline, "skipped_actions": derived.skipped_actions}
    )
