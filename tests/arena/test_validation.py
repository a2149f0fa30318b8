"""Task validation: two runs per tree, flaky and broken tests left out, CI-judged tasks,
timeouts never stored, CI results keyed by what really decides them."""

from __future__ import annotations

import os
from pathlib import Path

import docker
import pytest

from arena.ci import TaskCI
from arena.protocol import judge_patch
from arena.tasks.schema import Task, TaskKind
from arena.validation import ValidationIncomplete, judge_validation, validate_task
from ci_runner import CIRequest, CIResult, CIRunner, CISettings, CIStatus, Limits, TestOutcome
from ci_runner.images import ImageBuilder
from ci_runner.providers.docker.provider import DockerProvider
from tests.ci_runner.projects import PYTHON
from tests.conftest import MakeRepo

P, F, E, S = TestOutcome.PASSED, TestOutcome.FAILED, TestOutcome.ERROR, TestOutcome.SKIPPED


def ci(tests: dict[str, TestOutcome], patch_error_diff: int | None = None) -> CIResult:
    if patch_error_diff is not None:
        return CIResult(status=CIStatus.ERROR, patch_error="x: does not apply", patch_error_diff=0)
    failing = any(o in (F, E) for o in tests.values())
    return CIResult(status=CIStatus.FAILED if failing else CIStatus.PASSED, tests=tests)


def twice(tests: dict[str, TestOutcome]) -> list[CIResult]:
    return [ci(tests), ci(tests)]


def test_fail_to_pass_and_pass_to_pass_from_two_runs_of_each_tree() -> None:
    v = judge_validation(twice({"a": P, "b": F, "c": E}), twice({"a": P, "b": P, "c": P, "d": P}))
    assert v.valid and v.kind is TaskKind.GOLD_JUDGED
    assert v.fail_to_pass == ("b", "c", "d") and v.pass_to_pass == ("a",)
    assert v.flaky == () and v.broken == ()


def test_a_flaky_test_is_left_out_and_recorded() -> None:
    before = [ci({"a": P, "b": F, "flap": F}), ci({"a": P, "b": F, "flap": P})]
    after = [ci({"a": P, "b": P, "flap": P}), ci({"a": P, "b": P, "flap": F})]
    v = judge_validation(before, after)
    assert v.valid and v.flaky == ("flap",)
    assert v.fail_to_pass == ("b",) and v.pass_to_pass == ("a",)


def test_a_test_that_only_sometimes_exists_is_flaky() -> None:
    before = twice({"a": F})
    after = [ci({"a": P, "gone": P}), ci({"a": P})]
    v = judge_validation(before, after)
    assert v.valid and v.flaky == ("gone",) and v.fail_to_pass == ("a",)


def test_tests_failing_on_both_trees_are_broken_not_a_reason_to_reject() -> None:
    before = twice({"fixed": F, "old": P, "env": E, "net": F})
    after = twice({"fixed": P, "old": P, "env": E, "net": F, "new_but_broken": F})
    v = judge_validation(before, after)
    assert v.valid, v.reason
    assert v.broken == ("env", "net", "new_but_broken")
    assert v.fail_to_pass == ("fixed",) and v.pass_to_pass == ("old",)


def test_a_gold_run_that_failed_says_why_no_test_turned() -> None:
    # PowerGridModel: every build stopped at the workspace's disk limit, every test "error"
    failed = CIResult(
        status=CIStatus.FAILED,
        tests={"API": E},
        error="step 'Build and test' failed with exit code 1: No space left on device",
    )
    v = judge_validation(twice({"API": E}), [failed, failed])
    assert not v.valid and v.reason is not None
    assert v.reason.startswith("no test fails without the gold patch and passes with it")
    assert "(base + gold patch failed: step 'Build and test' failed" in v.reason
    assert "No space left on device" in v.reason


@pytest.mark.parametrize(
    ("before", "after", "reason"),
    [
        (twice({"a": P}), twice({"a": P}), "no test fails"),
        (
            twice({"a": F, "b": P}),
            twice({"a": P, "b": F}),
            "breaks tests that passed without it: b",
        ),
        ([ci({}, patch_error_diff=0)] * 2, twice({"a": P}), "do not apply"),
        (
            twice({"a": F}),
            [CIResult(status=CIStatus.FAILED, error="build failed")] * 2,
            "ran no test",
        ),
    ],
)
def test_invalid_tasks_keep_their_reason(
    before: list[CIResult], after: list[CIResult], reason: str
) -> None:
    v = judge_validation(before, after)
    assert not v.valid and v.reason is not None and reason in v.reason


def test_a_ci_judged_task_is_valid_when_tests_run_and_the_gold_patch_breaks_none() -> None:
    v = judge_validation(
        twice({"a": P, "b": F, "c": S}), twice({"a": P, "b": P, "c": S}), TaskKind.CI_JUDGED
    )
    assert v.valid and v.kind is TaskKind.CI_JUDGED
    assert v.fail_to_pass == () and v.pass_to_pass == ("a", "b")
    broken = judge_validation(twice({"a": P}), twice({"a": F}), TaskKind.CI_JUDGED)
    assert not broken.valid and broken.reason is not None and "breaks tests" in broken.reason
    silent = judge_validation(twice({}), twice({}), TaskKind.CI_JUDGED)
    assert not silent.valid and silent.reason is not None and "ran no test" in silent.reason


class CountingRunner(CIRunner):
    """The real runner, counting the sandboxes it starts."""

    def __init__(self, settings: CISettings, client: docker.DockerClient) -> None:
        super().__init__(settings, DockerProvider(settings, client))
        self.runs = 0

    def run(self, request: CIRequest, *args: object, **kwargs: object) -> CIResult:
        self.runs += 1
        return super().run(request)


@pytest.fixture
def counting(
    ci_settings: CISettings, docker_client: docker.DockerClient, images: dict[str, str]
) -> CountingRunner:
    return CountingRunner(ci_settings, docker_client)


def _task(make_repo: MakeRepo, **fields: object) -> Task:
    repo, commit = make_repo(PYTHON.files)
    record: dict[str, object] = {
        "instance_id": "calc-ci-judged",
        "repo": repo,
        "base_commit": commit,
        "language": "python",
        "pipeline": PYTHON.pipeline.model_dump(),
        "patch": PYTHON.fix,
        **fields,
    }
    return Task.model_validate(record)


def test_a_task_without_gold_tests_is_ci_judged_end_to_end(
    make_repo: MakeRepo,
    counting: CountingRunner,
    docker_client: docker.DockerClient,
    ci_settings: CISettings,
    tmp_path: Path,
) -> None:
    task = _task(make_repo)
    task_ci = TaskCI(
        counting,
        ImageBuilder(DockerProvider(ci_settings, docker_client), ci_settings),
        tmp_path / "results",
    )
    v = validate_task(task, task_ci)
    assert task.kind is TaskKind.CI_JUDGED and v.kind is TaskKind.CI_JUDGED
    assert v.valid, v.reason
    assert v.fail_to_pass == () and set(v.pass_to_pass) == {PYTHON.test_add, PYTHON.test_other}
    assert counting.runs == 4  # each tree twice
    applies, correct = judge_patch(task_ci.run(task, (PYTHON.fix, task.test_patch)), v)
    assert applies.holds and correct.holds
    applies, correct = judge_patch(task_ci.run(task, (PYTHON.wrong_fix, task.test_patch)), v)
    assert applies.holds and not correct.holds and PYTHON.test_add in correct.reason


def test_a_timeout_is_rerun_once_and_a_timed_out_validation_is_never_stored(
    make_repo: MakeRepo,
    counting: CountingRunner,
    docker_client: docker.DockerClient,
    ci_settings: CISettings,
    tmp_path: Path,
) -> None:
    slow = {
        "steps": [{"name": "test", "run": "sleep 30", "timeout_s": 1}],
        "report": {"format": "junit", "path": "report.xml"},
    }
    task = _task(make_repo, pipeline=slow, test_patch=PYTHON.fix)
    task_ci = TaskCI(
        counting,
        ImageBuilder(DockerProvider(ci_settings, docker_client), ci_settings),
        tmp_path / "results",
    )
    with pytest.raises(ValidationIncomplete, match="timed out twice; not stored"):
        validate_task(task, task_ci)
    assert counting.runs == 4  # two replicas of the first tree, each re-run once
    with pytest.raises(ValidationIncomplete):
        validate_task(task, task_ci)
    assert counting.runs == 8  # nothing was cached
    assert not list((tmp_path / "results").rglob("*.json"))


def test_the_result_cache_is_keyed_by_limits_and_the_images_id(
    make_repo: MakeRepo,
    counting: CountingRunner,
    docker_client: docker.DockerClient,
    ci_settings: CISettings,
    images: dict[str, str],
    tmp_path: Path,
) -> None:
    tag = f"arena/ci-python:cache-key-{os.getpid()}"  # a task may name only such images
    docker_client.images.get(images["python"]).tag(tag)
    try:
        task = _task(make_repo, image=tag)
        builder = ImageBuilder(DockerProvider(ci_settings, docker_client), ci_settings)
        first = TaskCI(counting, builder, tmp_path / "results")
        assert first.run(task, (PYTHON.fix,)).status is CIStatus.PASSED
        assert first.run(task, (PYTHON.fix,)).status is CIStatus.PASSED
        assert counting.runs == 1  # cached
        other_limits = TaskCI(counting, builder, tmp_path / "results", Limits(memory_mb=1024))
        other_limits.run(task, (PYTHON.fix,))
        assert counting.runs == 2  # other limits, other key
        container = docker_client.containers.create(images["python"], command="true")
        try:
            container.commit(*tag.split(":"))  # same tag, new image id
        finally:
            container.remove()
        first.run(task, (PYTHON.fix,))
        assert counting.runs == 3
    finally:
        docker_client.images.remove(tag, force=True)


def test_a_stored_validation_is_stale_once_runs_are_read_by_other_rules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A verdict stored before a change in how runs are read (RESULT_RULES: test ids, the
    log's stream order, tripwires) may rest on a misread log: the task's fingerprint, which
    a stored validation must match to stand, changes with those rules."""
    import ci_runner

    task = Task(
        instance_id="o__r-1",
        repo="https://example.com/r.git",
        base_commit="a" * 40,
        language="python",
        pipeline=PYTHON.pipeline,
        test_patch="diff",
        patch="diff",
    )
    before = task.fingerprint()
    assert task.fingerprint() == before
    monkeypatch.setattr(ci_runner, "RESULT_RULES", ci_runner.RESULT_RULES + 1)
    assert task.fingerprint() != before
