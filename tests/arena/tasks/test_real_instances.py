"""The eight real SwingArena instances in shared/data/swingarena-real, imported as shipped.

Their repositories come as git bundles; mirrors made from them stand in for GitHub through
mirror rules, so the lines are never edited. Each line must import on the leg its CI would
test the gold patch on, or be refused in a category that is not Arena's fault.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from arena.tasks.importer import import_jsonl
from arena.tasks.schema import Task
from ci_runner.git_mirrors import GitMirrors
from ci_runner.workspace import Workspaces
from tests.shared_data import bundle_mirror, shared_data

REAL = shared_data() / "swingarena-real"

# instance -> the leg chosen at import (`leg @ workflow`), or the refusal's category
CHOSEN = "chosen"
REFUSED = "refused"
EXPECTED: dict[str, tuple[str, str]] = {
    "hashicorp__raft-605": (CHOSEN, "go-test (1.20, x64) @ .github/workflows/ci.yml"),
    # its fix is the `install` script, with no gold test: no test can tell it from none
    "junegunn__fzf-4112": (REFUSED, "gold patch changes no code"),
    # a sibling of the listed legs (3.10, 3.12) on Python 3.11, which this machine has
    "maykinmedia__django-timeline-logger-29": (
        CHOSEN,
        "Run the test suite (Python 3.11, Django 3.2) @ .github/workflows/ci.yml",
    ),
    # conda legs only; this test's conda channel answers (`imported`), as on a machine that
    # reaches anaconda.org
    "wntrblm__nox-804": (REFUSED, "needs conda"),
    # the 3.11 legs first: this machine has Python 3.11 and 3.13, not 3.12
    "Chainlit__chainlit-1418": (CHOSEN, "pytest (3.11, 0.111) @ .github/workflows/pytest.yaml"),
    "omnivector-solutions__jobbergate-517": (REFUSED, "needs Docker in the job"),
    "PowerGridModel__power-grid-model-718": (
        CHOSEN,
        "build-cpp-test-linux (debug, clang) @ .github/workflows/main.yml",
    ),
    # the listed `test` job ran on Windows: its Linux leg; `bindings` is the next candidate
    "duesee__imap-codec-561": (CHOSEN, "test (ubuntu-latest) @ .github/workflows/main.yml"),
}


@pytest.fixture(scope="module")
def bundle_mirrors(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A mirror of every bundle, named OWNER+NAME.git as SOURCE.md suggests."""
    folder = tmp_path_factory.mktemp("real-mirrors")
    for bundle in sorted(REAL.glob("*.bundle")):
        (folder / f"{bundle.stem}.git").symlink_to(bundle_mirror(bundle))
    return folder


@pytest.fixture(scope="module")
def imported(
    bundle_mirrors: Path, conda_channel: str, tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, Task], dict[str, str]]:
    """Every line of the four files as shipped: tasks by id, and refusals' categories by id."""
    cache = tmp_path_factory.mktemp("real-cache")
    rules = GitMirrors.of({"https://github.com/": f"{bundle_mirrors}/{{owner}}+{{name}}.git"})
    workspaces = Workspaces(cache / "mirrors", cache / "runs", rules)
    for mirror in sorted(bundle_mirrors.glob("*.git")):
        # each workspace mirror cloned by git, from where the rule points its repo: the same
        # refs libgit2's fetch would bring, in a second instead of the ~40 s its local
        # transport takes to pack and index these repos (fetching itself: test_git_mirrors)
        source = f"https://github.com/{mirror.stem.replace('+', '/')}.git"
        assert Path(workspaces.fetch_location(source)) == mirror.resolve()
        clone = ["git", "clone", "--quiet", "--mirror", str(mirror)]
        subprocess.run([*clone, str(workspaces.mirror_path(source))], check=True)
    tasks: dict[str, Task] = {}
    refused: dict[str, str] = {}
    for path in sorted(REAL.glob("*_filtered_instance_list.jsonl")):
        lines = path.read_text().splitlines()
        with pytest.MonkeyPatch.context() as env:
            env.setenv("ARENA_CONDA_CHANNEL", conda_channel)
            report = import_jsonl(path, workspaces)
        tasks |= {t.instance_id: t for t in report.tasks}
        for error in report.errors:
            instance = _instance_of(lines[error.line - 1])
            refused[instance] = error.reason
    return tasks, refused


def _instance_of(line: str) -> str:
    return str(json.loads(line)["instance_id"])


def test_every_real_line_is_accounted_for(imported: tuple[dict[str, Task], dict[str, str]]) -> None:
    tasks, refused = imported
    assert set(tasks) | set(refused) == set(EXPECTED)
    assert not set(tasks) & set(refused)


@pytest.mark.parametrize("instance", sorted(EXPECTED))
def test_each_real_line_imports_on_its_test_leg_or_is_refused_in_its_category(
    instance: str, imported: tuple[dict[str, Task], dict[str, str]]
) -> None:
    tasks, refused = imported
    outcome, expected = EXPECTED[instance]
    if outcome == REFUSED:
        assert refused.get(instance) == expected, tasks.get(instance)
        return
    assert instance in tasks, refused.get(instance)
    task = tasks[instance]
    assert task.ci_job == expected, [f"{leg.leg}: {leg.status} {leg.why}" for leg in task.ci_legs]
    # every leg considered is on the task, the chosen one first among the candidates
    statuses = {leg.status for leg in task.ci_legs}
    assert "chosen" in statuses
    chosen = [leg for leg in task.ci_legs if leg.status == "chosen"]
    assert len(chosen) == 1 and chosen[0].rank == 0
    assert all(leg.why for leg in task.ci_legs)


def test_lint_docs_and_release_legs_are_never_chosen_over_test_legs(
    imported: tuple[dict[str, Task], dict[str, str]],
) -> None:
    tasks, _ = imported
    timeline = tasks["maykinmedia__django-timeline-logger-29"]
    ranks = {leg.leg: leg.rank for leg in timeline.ci_legs}
    tests = [r for name, r in ranks.items() if name.startswith("Run the test suite")]
    quality = [r for name, r in ranks.items() if name.startswith("Code-quality")]
    assert tests and all(r is not None for r in tests)
    assert all(q is None or q > max(t for t in tests if t is not None) for q in quality)
    raft = tasks["hashicorp__raft-605"]
    compat = [leg for leg in raft.ci_legs if "x32" in leg.leg or "compat" in leg.leg]
    assert compat and all(leg.status != "chosen" for leg in compat)
