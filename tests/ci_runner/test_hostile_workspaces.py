"""What a patch or tests put in the workspace never crashes the runner into an infrastructure
fault: a tree Arena's own code cannot walk is the code's doing (issue: a file 1,000 folders
deep made the tripwire planter recurse until RecursionError, and the worker voided a match
the patch was losing)."""

from __future__ import annotations

import pytest

from ci_runner import CIRequest, CIRunner, CIStatus
from tests.ci_runner.projects import PYTHON
from tests.conftest import MakeRepo

pytestmark = pytest.mark.docker


def _new_file(path: str, text: str) -> str:
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        f"@@ -0,0 +1 @@\n+{text}\n"
    )


HOSTILE = {
    "a file 1,000 folders deep": _new_file("/".join(["d"] * 1000) + "/x.py", "x = 1"),
    "a folder 3,000 files wide": "".join(_new_file(f"wide/f{n}.py", "x = 1") for n in range(3000)),
    "a 255-byte name": _new_file("n" * 251 + ".py", "x = 1"),
    "a link to its own folder": (
        "diff --git a/loop b/loop\nnew file mode 120000\n--- /dev/null\n+++ b/loop\n"
        "@@ -0,0 +1 @@\n+.\n\\ No newline at end of file\n"
    ),
}


@pytest.mark.parametrize("tree", sorted(HOSTILE))
def test_a_hostile_tree_is_the_codes_doing_never_an_infrastructure_fault(
    tree: str, runner: CIRunner, images: dict[str, str], make_repo: MakeRepo
) -> None:
    repo, commit = make_repo(PYTHON.files)
    request = CIRequest(
        repo=repo,
        commit=commit,
        pipeline=PYTHON.pipeline,
        image=images["python"],
        diffs=(PYTHON.fix + HOSTILE[tree],),
    )
    result = runner.run(request)  # raises SandboxError on an infrastructure fault
    assert result.patch_error is None, result.patch_error
    # a verdict on the code: it passed, guarded, or failed (the tree broke its own tests)
    assert result.status in (CIStatus.PASSED, CIStatus.FAILED), result.error
    if result.status is CIStatus.PASSED:
        assert result.forged is None and all(site.held for site in result.tripwires)
