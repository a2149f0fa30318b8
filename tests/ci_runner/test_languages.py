"""Each language end to end in real containers: correct, wrong and stale diffs."""

from __future__ import annotations

import pytest

from ci_runner import CIRequest, CIRunner, CIStatus, TestOutcome
from tests.ci_runner.projects import PROJECTS, Project
from tests.conftest import MakeRepo

pytestmark = pytest.mark.usefixtures("no_containers_left")


def _request(
    project: Project, images: dict[str, str], repo: str, commit: str, *diffs: str
) -> CIRequest:
    return CIRequest(
        repo=repo,
        commit=commit,
        pipeline=project.pipeline,
        image=images[project.language],
        diffs=diffs,
    )


@pytest.fixture(params=PROJECTS, ids=lambda p: p.language)
def project(request: pytest.FixtureRequest) -> Project:
    return request.param  # type: ignore[no-any-return]


def test_correct_diff_passes_with_the_right_test_ids(
    project: Project, images: dict[str, str], runner: CIRunner, make_repo: MakeRepo
) -> None:
    repo, commit = make_repo(project.files)
    result = runner.run(_request(project, images, repo, commit, project.fix))
    assert result.status is CIStatus.PASSED, result.error
    assert result.tests == {
        project.test_add: TestOutcome.PASSED,
        project.test_other: TestOutcome.PASSED,
    }
    assert result.error is None


def test_wrong_diff_fails_naming_the_failing_test(
    project: Project, images: dict[str, str], runner: CIRunner, make_repo: MakeRepo
) -> None:
    repo, commit = make_repo(project.files)
    result = runner.run(_request(project, images, repo, commit, project.wrong_fix))
    assert result.status is CIStatus.FAILED
    assert result.tests[project.test_add] is TestOutcome.FAILED
    assert result.tests[project.test_other] is TestOutcome.PASSED
    assert result.failing_tests() == [project.test_add]
    assert result.error is not None and project.test_add in result.error


def test_stale_diff_is_an_error_naming_the_file(
    project: Project, images: dict[str, str], runner: CIRunner, make_repo: MakeRepo
) -> None:
    repo, commit = make_repo(project.files)
    result = runner.run(_request(project, images, repo, commit, project.stale))
    assert result.status is CIStatus.ERROR
    assert result.patch_error is not None and project.source in result.patch_error
    assert "does not apply" in result.patch_error
    assert result.steps == ()


def test_unpatched_base_shows_the_bug(
    project: Project, images: dict[str, str], runner: CIRunner, make_repo: MakeRepo
) -> None:
    repo, commit = make_repo(project.files)
    result = runner.run(_request(project, images, repo, commit))
    assert result.status is CIStatus.FAILED
    assert result.failing_tests() == [project.test_add]


def test_a_go_test_whose_wrapper_resets_goflags_still_reports_each_test(
    images: dict[str, str], runner: CIRunner, make_repo: MakeRepo
) -> None:
    """A magefile or script gives `go test` GOFLAGS of its own (`-v` from the pipeline's
    GOFLAGS is gone): the image's `go` still prints each test's line, which is read."""
    project = next(p for p in PROJECTS if p.language == "go")
    repo, commit = make_repo({**project.files, "ci.sh": "GOFLAGS=-mod=mod go test ./...\n"})
    pipeline = project.pipeline.model_copy(
        update={
            "env": {"GOFLAGS": "-mod=mod -v", "GOPROXY": "off"},
            "steps": [project.pipeline.steps[0].model_copy(update={"run": "sh ci.sh"})],
            "report": project.pipeline.report.model_copy(update={"path": None, "step": "test"}),
        }
    )
    request = _request(project, images, repo, commit, project.wrong_fix)
    result = runner.run(request.model_copy(update={"pipeline": pipeline}))
    assert result.tests == {
        project.test_add: TestOutcome.FAILED,
        project.test_other: TestOutcome.PASSED,
    }, result.steps[-1].log[-2000:]
