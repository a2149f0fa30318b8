"""Unsafe diffs are refused, naming the file and why, before any container starts."""

from __future__ import annotations

import time

import docker
import pytest

from ci_runner import CIRequest, CIRunner, CIStatus, Pipeline
from tests.conftest import MakeRepo, containers_created_since

PIPELINE = Pipeline.model_validate(
    {"steps": [{"name": "t", "run": "true"}], "report": {"format": "junit", "path": "r.xml"}}
)
FILES = {
    "app.py": "x = 1\n",
    "escape": "symlink:/etc",
    "updir": "symlink:..",
    "pkg/mod.py": "y = 2\n",
}


def _edit(path: str, old: str = "x = 1", new: str = "x = 2") -> str:
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-{old}\n+{new}\n"
    )


def _new_file(path: str, body: str = "evil") -> str:
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        f"@@ -0,0 +1 @@\n+{body}\n"
    )


SYMLINK_OUT = (
    "diff --git a/link b/link\nnew file mode 120000\n--- /dev/null\n+++ b/link\n"
    "@@ -0,0 +1 @@\n+../../../etc/passwd\n\\ No newline at end of file\n"
)

CASES = {
    "parent-dir": (_new_file("../outside.txt"), "../outside.txt", ".."),
    "deep-parent-dir": (_new_file("pkg/../../outside.txt"), "pkg/../../outside.txt", ".."),
    "git-dir": (_new_file(".git/hooks/post-checkout"), ".git/hooks/post-checkout", ".git"),
    "git-dir-case": (_new_file(".GIT/config"), ".GIT/config", ".git"),
    "through-symlink": (_new_file("escape/cron.d/evil"), "escape/cron.d/evil", "symlink"),
    "through-updir-symlink": (_new_file("updir/evil"), "updir/evil", "symlink"),
    "symlink-out": (SYMLINK_OUT, "link", "symlink"),
    "garbage": ("this is not a diff at all\n", "(diff)", "not a unified diff"),
    "empty": ("", "(diff)", "empty"),
    "binary-nul": ("diff --git a/a b/a\n\x00\x01", "(diff)", "NUL"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_unsafe_diff_is_refused_before_any_container(
    case: str, runner: CIRunner, make_repo: MakeRepo, docker_client: docker.DockerClient
) -> None:
    diff, path, why = CASES[case]
    repo, commit = make_repo(FILES)
    started = time.time()
    result = runner.run(
        CIRequest(repo=repo, commit=commit, pipeline=PIPELINE, image="none:none", diffs=(diff,))
    )
    assert result.status is CIStatus.ERROR
    assert result.patch_error is not None
    assert result.patch_error.startswith(f"diff #1: {path}:"), result.patch_error
    assert why in result.patch_error
    assert containers_created_since(docker_client, started) == 0


def test_second_diff_failing_is_named_by_its_index(runner: CIRunner, make_repo: MakeRepo) -> None:
    repo, commit = make_repo(FILES)
    result = runner.run(
        CIRequest(
            repo=repo,
            commit=commit,
            pipeline=PIPELINE,
            image="none:none",
            diffs=(_edit("app.py"), _edit("app.py")),  # the second no longer matches
        )
    )
    assert result.patch_error == (
        "diff #2: app.py: does not apply: hunk #1 (@@ -1,1 +1,1 @@, removing 'x = 1') "
        "does not match the file (expected at line 1)"
    )


def test_diffs_apply_in_order(
    runner: CIRunner, make_repo: MakeRepo, images: dict[str, str]
) -> None:
    repo, commit = make_repo(FILES)
    pipeline = Pipeline.model_validate(
        {
            "steps": [{"name": "t", "run": "cat app.py new.txt > out.txt; grep -q 'x = 3' app.py"}],
            "report": {"format": "junit", "step": "t"},
        }
    )
    result = runner.run(
        CIRequest(
            repo=repo,
            commit=commit,
            pipeline=pipeline,
            image=images["python"],
            diffs=(
                _edit("app.py"),
                _edit("app.py", "x = 2", "x = 3"),
                _new_file("new.txt", "hello"),
            ),
        )
    )
    assert result.patch_error is None
    assert result.steps[0].exit_code == 0
