"""A task's pipeline: its own, or derived from its repo's workflow job (`ci_name_list`)."""

from __future__ import annotations

import re

from arena.tasks.schema import Task, TaskError, UnsupportedTask
from ci_runner.workflows import UnsupportedJob, WorkflowError, derive_pipeline
from ci_runner.workspace import Workspaces

WORKFLOWS_DIR = ".github/workflows"
_GITHUB_URL = re.compile(r"^https://github\.com/(?P<slug>[\w.-]+/[\w.-]+?)(?:\.git)?/?$")


def with_pipeline(task: Task, workspaces: Workspaces) -> Task:
    """The task with a pipeline, reading the workflow files at its base commit if needed.

    The job leg it came from and every decision taken on the way are kept on the task.
    """
    if task.pipeline is not None:
        return task
    files = workspaces.read_files(task.repo, task.base_commit, WORKFLOWS_DIR)
    workflows = {p: t for p, t in files.items() if p.endswith((".yml", ".yaml"))}
    github = {"sha": task.base_commit}
    if match := _GITHUB_URL.match(task.repo):
        github["repository"] = match["slug"]
        github["repository_owner"] = match["slug"].split("/")[0]
    try:
        derived = derive_pipeline(
            workflows,
            list(task.ci_name_list),
            task.language.value,
            read_file=lambda path: workspaces.read_text(task.repo, task.base_commit, path),
            github=github,
        )
    except UnsupportedJob as exc:
        raise UnsupportedTask(f"ci_name_list: {exc}", exc.reason) from exc
    except WorkflowError as exc:
        raise TaskError(f"ci_name_list: {exc}") from exc
    return task.model_copy(
        update={
            "pipeline": derived.pipeline,
            "skipped_actions": derived.skipped_actions,
            "ci_job": f"{derived.leg} @ {derived.workflow_file}",
            "workflow_notes": derived.notes,
            "toolchain_request": derived.toolchain_request,
        }
    )
