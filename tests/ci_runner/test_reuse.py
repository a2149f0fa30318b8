"""A second run of the same task reuses the mirror and the images."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import docker

from ci_runner import CIRequest, CIRunner, CISettings, CIStatus
from ci_runner.images import ImageBuilder
from ci_runner.providers.docker.provider import DockerProvider
from tests.ci_runner.projects import PYTHON
from tests.conftest import MakeRepo


def test_second_run_needs_neither_the_source_nor_a_build(
    runner: CIRunner,
    images: dict[str, str],
    make_repo: MakeRepo,
    ci_settings: CISettings,
    docker_client: docker.DockerClient,
) -> None:
    repo, commit = make_repo(PYTHON.files)
    request = CIRequest(
        repo=repo,
        commit=commit,
        pipeline=PYTHON.pipeline,
        image=images["python"],
        diffs=(PYTHON.fix,),
    )
    assert runner.run(request).status is CIStatus.PASSED
    shutil.rmtree(repo)  # the source is gone: only the cached mirror can serve the commit
    assert runner.run(request).status is CIStatus.PASSED

    lines: list[str] = []
    started = time.monotonic()
    tag = ImageBuilder(DockerProvider(ci_settings, docker_client), ci_settings).ensure(
        "python", progress=lines.append
    )
    assert tag == images["python"]
    assert lines == []  # no build, no bootstrap
    assert time.monotonic() - started < 5


def test_mirror_is_fetched_again_for_a_new_commit(
    runner: CIRunner, images: dict[str, str], make_repo: MakeRepo, tmp_path: Path
) -> None:
    from arena.tasks.gitrepo import commit_directory
    from tests.conftest import write_tree

    repo, commit = make_repo(PYTHON.files)
    request = CIRequest(repo=repo, commit=commit, pipeline=PYTHON.pipeline, image=images["python"])
    assert runner.run(request).status is CIStatus.FAILED
    fixed = dict(PYTHON.files, **{"calc.py": PYTHON.files["calc.py"].replace("a - b", "a + b")})
    write_tree(tmp_path / "fixed", fixed)
    new_commit = commit_directory(tmp_path / "fixed", Path(repo))
    result = runner.run(request.model_copy(update={"commit": new_commit}))
    assert result.status is CIStatus.PASSED
