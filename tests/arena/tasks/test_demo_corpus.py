"""The bundled demo corpus: two real-looking tasks per language, all of which validate."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from arena.ci import TaskCI
from arena.hunks import split_diff
from arena.players.baselines import partial_patch, partial_tests
from arena.tasks.demo import demo_sources, demo_tasks
from arena.tasks.pipelines import with_pipeline
from arena.tasks.schema import Language, Task
from arena.validation import validate_task
from ci_runner import CIRunner, CISettings, CIStatus, SandboxError
from ci_runner.images import ImageBuilder
from ci_runner.providers.docker.provider import DockerProvider
from ci_runner.workspace import Workspaces


@pytest.fixture(scope="session")
def demo(ci_settings: CISettings) -> list[Task]:
    workspaces = Workspaces(ci_settings.mirrors_dir, ci_settings.runs_dir)
    return [with_pipeline(t, workspaces) for t in demo_tasks(ci_settings.cache_dir / "demo-repos")]


@pytest.fixture(scope="session")
def task_ci(runner: CIRunner, ci_settings: CISettings, images: dict[str, str]) -> TaskCI:
    return TaskCI(
        runner, ImageBuilder(runner.provider, ci_settings), ci_settings.cache_dir / "ci-results"
    )


def test_two_tasks_per_language_with_issue_text_and_gold(demo: list[Task]) -> None:
    assert Counter(t.language for t in demo) == {language: 2 for language in Language}
    for task in demo:
        assert len(task.problem_statement) > 200, task.instance_id
        assert len(split_diff(task.patch)) >= 1 and len(split_diff(task.test_patch)) >= 1
        assert sum(len(f.hunks) for f in split_diff(task.patch)) >= 2, "partial needs hunks to drop"


def test_one_demo_task_takes_its_pipeline_from_a_workflow(demo: list[Task]) -> None:
    derived = [t for t in demo if t.ci_name_list]
    assert derived and all(t.pipeline is not None for t in derived)
    assert any("codecov/codecov-action@v4" in t.skipped_actions for t in derived)


def test_materializing_twice_gives_the_same_commit(tmp_path: Path, demo: list[Task]) -> None:
    again = {t.instance_id: t.base_commit for t in demo_tasks(tmp_path)}
    assert again == {t.instance_id: t.base_commit for t in demo}


@pytest.mark.parametrize("index", range(len(demo_sources())))
def test_every_demo_task_validates_and_partial_is_partly_right(
    index: int, demo: list[Task], task_ci: TaskCI
) -> None:
    task = demo[index]
    validation = validate_task(task, task_ci)
    assert validation.valid, f"{task.instance_id}: {validation.reason}"
    assert validation.fail_to_pass and validation.pass_to_pass
    partial = task_ci.run(task, (partial_patch(task.patch), task.test_patch))
    assert partial.patch_error is None
    assert partial.status is CIStatus.FAILED
    still_failing = set(partial.failing_tests()) & set(validation.fail_to_pass)
    assert 0 < len(still_failing) < len(validation.fail_to_pass) or not partial.tests, partial.error
    assert partial_tests(task.test_patch).strip()


def test_a_stored_validation_stands_while_the_task_is_unchanged(
    demo: list[Task], task_ci: TaskCI, ci_settings: CISettings, tmp_path: Path
) -> None:
    import docker

    task = demo[0]
    stored = task.model_copy(update={"validation": validate_task(task, task_ci)})
    dead = docker.DockerClient(base_url=f"unix://{tmp_path}/no-engine.sock", version="1.41")
    offline = TaskCI(
        CIRunner(ci_settings, DockerProvider(ci_settings, dead)),
        ImageBuilder(DockerProvider(ci_settings, dead), ci_settings),
        None,
    )
    assert validate_task(stored, offline) == stored.validation  # no CI needed
    changed = stored.model_copy(update={"patch": stored.patch + "\n"})
    with pytest.raises(SandboxError, match="cannot inspect image"):
        validate_task(changed, offline)  # a changed task is validated again
