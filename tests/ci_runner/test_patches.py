"""Unsafe diffs are refused, naming the file and why, before any container starts."""

from __future__ import annotations

import contextlib
import random
import tracemalloc
from pathlib import Path

import docker
import pygit2
import pytest

from ci_runner import CIRequest, CIResult, CIRunner, CIStatus, PatchError, Pipeline
from ci_runner.diff_text import normalize_diff
from ci_runner.patches import apply_diffs
from tests.conftest import MakeRepo, sandboxes_created

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
    "long-name": (_new_file("n" * 300), "n" * 300, "longer than 255 bytes"),
    "long-directory": (_new_file("d" * 256 + "/x.py"), "d" * 256 + "/x.py", "longer than 255"),
    "plain-long-name": (
        f"--- /dev/null\n+++ b/{'p' * 300}\n@@ -0,0 +1 @@\n+x\n",
        "p" * 300,
        "longer than 255 bytes",
    ),
    "plain-parent-dir": (
        "--- a/../outside.txt\n+++ b/../outside.txt\n@@ -1 +1 @@\n-a\n+b\n",
        "../outside.txt",
        "..",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_unsafe_diff_is_refused_before_any_container(
    case: str, runner: CIRunner, make_repo: MakeRepo, docker_client: docker.DockerClient
) -> None:
    diff, path, why = CASES[case]
    repo, commit = make_repo(FILES)
    with sandboxes_created(docker_client) as created:
        result = runner.run(
            CIRequest(repo=repo, commit=commit, pipeline=PIPELINE, image="none:none", diffs=(diff,))
        )
    assert result.status is CIStatus.ERROR
    assert result.patch_error is not None
    assert result.patch_error.startswith(f"diff #1: {path}:"), result.patch_error
    assert why in result.patch_error
    assert created.count == 0


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
        "diff #2: app.py: does not apply: hunk #1 (@@ -1 +1 @@, removing 'x = 1') "
        "does not match the file (expected at line 1)"
    )


def _run_script(runner: CIRunner, request: CIRequest, script: str) -> CIResult:
    """Run `request` with its pipeline replaced by one step running `script`."""
    pipeline = Pipeline.model_validate(
        {"steps": [{"name": "t", "run": script}], "report": {"format": "junit", "step": "t"}}
    )
    return runner.run(request.model_copy(update={"pipeline": pipeline}))


def test_diffs_apply_in_order(
    runner: CIRunner, make_repo: MakeRepo, images: dict[str, str]
) -> None:
    repo, commit = make_repo(FILES)
    result = _run_script(
        runner,
        CIRequest(
            repo=repo,
            commit=commit,
            pipeline=PIPELINE,
            image=images["python"],
            diffs=(
                _edit("app.py"),
                _edit("app.py", "x = 2", "x = 3"),
                _new_file("new.txt", "hello"),
            ),
        ),
        "cat app.py new.txt > out.txt; grep -q 'x = 3' app.py",
    )
    assert result.patch_error is None
    assert result.steps[0].exit_code == 0


def _link(path: str, target: str) -> str:
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 120000\n--- /dev/null\n+++ b/{path}\n"
        f"@@ -0,0 +1 @@\n+{target}\n\\ No newline at end of file\n"
    )


RLO = "\u202e"  # right-to-left override: shows `evil\u202egnp.py` as `evilyp.png`
HOSTILE = {
    "link-updir-behind-a-dir": (_link("b", "a/.."), "b", "leaves its directory ('a/..' holds .."),
    "link-to-a-sibling-dir": (_link("pkg/alias", "../app.py"), "pkg/alias", "leaves its dir"),
    "link-absolute": (_link("l", "/etc/passwd"), "l", "to an absolute path ('/etc/passwd')"),
    "link-into-git": (_link("l", ".git/config"), "l", "unsafe path ('.git/config'"),
    "file-made-a-link": (
        "diff --git a/app.py b/app.py\nold mode 100644\nnew mode 120000\n",
        "app.py",
        "turns a file into a symlink",
    ),
    "rlo-new-file": (_new_file(f"evil{RLO}gnp.py"), "'evil\\u202egnp.py'", "(U+202E)"),
    "isolates-plain": (
        "--- /dev/null\n+++ b/x\u2066y\u2069.py\n@@ -0,0 +1 @@\n+x\n",
        "'x\\u2066y\\u2069.py'",
        "bidirectional text controls (U+2066, U+2069)",
    ),
    "rlm-rename": (
        "diff --git a/app.py b/app\u200f.py\nsimilarity index 100%\n"
        "rename from app.py\nrename to app\u200f.py\n",
        "'app\\u200f.py'",
        "(U+200F) that show it as another name",
    ),
}


@pytest.mark.docker
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_links_leaving_their_directory_and_bidi_names_are_refused_by_the_runner(
    case: str,
    runner: CIRunner,
    make_repo: MakeRepo,
    images: dict[str, str],
    no_containers_left: None,
) -> None:
    diff, shown, why = HOSTILE[case]
    repo, commit = make_repo(FILES)
    result = _run_script(
        runner,
        CIRequest(
            repo=repo, commit=commit, pipeline=PIPELINE, image=images["python"], diffs=(diff,)
        ),
        "true",
    )
    assert result.status is CIStatus.ERROR
    assert result.patch_error is not None
    assert result.patch_error.startswith(f"diff #1: {shown}: "), result.patch_error
    assert why in result.patch_error
    assert result.patch_error.isascii()  # nothing in it reorders or hides what is shown
    # the sandbox starts while the diffs are applied, and is removed unused: nothing of the
    # diff reached it and no step ran
    assert result.steps == ()


@pytest.mark.docker
def test_a_link_into_its_own_directory_applies(
    runner: CIRunner, make_repo: MakeRepo, images: dict[str, str]
) -> None:
    repo, commit = make_repo(FILES)
    result = _run_script(
        runner,
        CIRequest(
            repo=repo,
            commit=commit,
            pipeline=PIPELINE,
            image=images["python"],
            diffs=(_link("pkg/alias.py", "mod.py"),),
        ),
        "test -L pkg/alias.py && grep -q 'y = 2' pkg/alias.py",
    )
    assert result.patch_error is None
    assert result.steps[0].exit_code == 0, result.steps[0].log


PLAIN_WRONG_COUNTS_AND_LINES = (
    "Here is the fix:\n\n```diff\n--- app.py\n+++ app.py\n@@ -7,9 +7,9 @@\n-x = 1\n+x = 5\n```\n"
)


def test_plain_diff_with_wrong_counts_runs_and_records_the_fuzz(
    runner: CIRunner, make_repo: MakeRepo, images: dict[str, str]
) -> None:
    repo, commit = make_repo({**FILES, "pkg/mod.py": "y = 2\n" * 3 + "z = 3\nw = 4\n"})
    stale_context = (
        "--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -3,3 +3,3 @@\n y = 0\n-z = 3\n+z = 30\n w = 4\n"
    )
    result = _run_script(
        runner,
        CIRequest(
            repo=repo,
            commit=commit,
            pipeline=PIPELINE,
            image=images["python"],
            diffs=(PLAIN_WRONG_COUNTS_AND_LINES, stale_context),
        ),
        "grep -qx 'x = 5' app.py && grep -qx 'z = 30' pkg/mod.py",
    )
    assert result.patch_error is None
    assert result.steps[0].exit_code == 0, result.steps[0].log
    assert result.fuzz == (
        "diff #1: app.py: hunk #1 line counts recounted (@@ -7,9 +7,9 @@ holds -1 +1 lines)",
        "diff #1: app.py: hunk #1 applied at line 1 with offset -6 lines",
        "diff #2: pkg/mod.py: hunk #1 applied at line 3 with fuzz 1",
    )
    assert (
        CIResult.model_validate({k: v for k, v in result.model_dump().items() if k != "fuzz"}).fuzz
        == ()
    )  # results stored before the field existed still load


def test_hunk_that_does_not_apply_is_refused_naming_file_and_hunk(
    runner: CIRunner, make_repo: MakeRepo, docker_client: docker.DockerClient
) -> None:
    repo, commit = make_repo(FILES)
    diff = (
        "--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -1 +1 @@\n-y = 2\n+y = 3\n"
        "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-x = 7\n+x = 8\n"
    )
    with sandboxes_created(docker_client) as created:
        result = runner.run(
            CIRequest(repo=repo, commit=commit, pipeline=PIPELINE, image="none:none", diffs=(diff,))
        )
    assert result.status is CIStatus.ERROR
    assert result.patch_error == (
        "diff #1: app.py: does not apply: hunk #1 (@@ -1 +1 @@, removing 'x = 7') "
        "does not match the file (expected at line 1)"
    )
    assert created.count == 0


def test_oversized_diff_is_refused_without_copying_it(
    runner: CIRunner, make_repo: MakeRepo
) -> None:
    repo, commit = make_repo(FILES)
    huge = "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-x = 1\n" + "+x = 2\n" * 3_000_000
    request = CIRequest(
        repo=repo, commit=commit, pipeline=PIPELINE, image="none:none", diffs=(huge,)
    )
    tracemalloc.start()
    try:
        result = runner.run(request)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.patch_error is not None
    assert "over the 16 MiB limit" in result.patch_error
    assert peak < 4 * 1024 * 1024


def test_git_quoted_paths_are_unquoted_and_control_characters_refused(tmp_path: Path) -> None:
    quoted = '--- "a/caf\\303\\251.py"\n+++ "b/caf\\303\\251.py"\n@@ -0,0 +1 @@\n+x = 1\n'
    assert "+++ b/café.py\n" in normalize_diff(quoted).text
    with pytest.raises(PatchError, match="control characters"):
        normalize_diff('--- /dev/null\n+++ "b/evil\\nname"\n@@ -0,0 +1 @@\n+x\n', 0)


_PIECES = [
    "diff --git a/app.py b/app.py\n",
    "--- a/app.py\n",
    "+++ b/app.py\n",
    "--- /dev/null\n",
    "+++ /dev/null\n",
    '--- "a/q\\x"\n',
    '+++ "b/q\\x"\n',
    f"+++ b/{'z' * 300}\n",
    "--- a/../x\n",
    "+++ b/.git/config\n",
    "@@ -1 +1 @@\n",
    "@@ -0,0 +1 @@\n",
    "@@\n",
    "@@ -99999999999999999999 +1 @@\n",
    " x = 1\n",
    "-x = 1\n",
    "+x = 2\n",
    "\n",
    "```diff\n",
    "```\n",
    "\\ No newline at end of file\n",
    "new file mode 100644\n",
    "deleted file mode 100755\n",
    "rename from x\n",
    "rename to y\n",
    "old mode 100644\n",
    "new mode 100755\n",
    "GIT binary patch\n",
    "literal 0\n",
    "Index: x\n",
]


def test_any_diff_text_is_applied_or_refused_never_an_exception(tmp_path: Path) -> None:
    """Diffs come from models and task files: whatever they hold gives a PatchError at worst."""
    chooser = random.Random(7)
    for attempt in range(400):
        root = tmp_path / str(attempt)
        root.mkdir()
        (root / "app.py").write_text("x = 1\n")
        repo = pygit2.init_repository(str(root))
        text = "".join(chooser.choice(_PIECES) for _ in range(chooser.randint(1, 12)))
        with contextlib.suppress(PatchError):
            apply_diffs(root, repo, (text,))
