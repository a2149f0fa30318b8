"""A line runs as the language its gold tests and patch are written in, whatever file it was
filed in; a language Arena does not run is refused by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.tasks.importer import import_lines
from arena.tasks.schema import Language
from ci_runner.workspace import Workspaces
from tests.conftest import MakeRepo


def _diff(*paths: str) -> str:
    return "".join(
        f"diff --git a/{p} b/{p}\n--- a/{p}\n+++ b/{p}\n@@ -1 +1 @@\n-a\n+b\n" for p in paths
    )


def _line(filed: str, patch: list[str], tests: list[str]) -> str:
    return json.dumps(
        {
            "instance_id": "octo__repo-1",
            "repo": "octo/repo",
            "base_commit": "a" * 40,
            "language": filed,
            "patch": _diff(*patch),
            "test_patch": _diff(*tests),
            "ci_name_list": ["test"],
        }
    )


@pytest.mark.parametrize(
    ("filed", "patch", "tests", "runs_as"),
    [
        # filed under Python, a Go repo: runs as Go
        ("python", ["pkg/parse.go"], ["pkg/parse_test.go"], Language("go")),
        # filed under Rust, C++ fix and tests: runs as C++
        ("rust", ["include/lib.hpp"], ["scripts/test.cpp"], Language("cpp")),
        # no tests: the patch's language decides
        ("python", ["src/lib.rs", "Cargo.toml"], [], Language("rust")),
        # a Python project's fix in data files its Python tests read: Python, as filed
        ("python", ["filters/config.yaml", "fixtures/a.json"], ["tests/test_filters.py"], Language("python")),
        # a C++ fix checked by Go integration tests: C++, as filed
        ("cpp", ["src/server.cc"], ["tests/integration/replication_test.go"], Language("cpp")),
    ],
)  # fmt: skip
def test_a_line_runs_as_the_language_it_is_written_in(
    filed: str, patch: list[str], tests: list[str], runs_as: Language
) -> None:
    report = import_lines([_line(filed, patch, tests)], None)
    assert not report.errors
    [task] = report.tasks
    assert task.language is runs_as
    assert task.filed_language == (None if runs_as.value == filed else filed)


@pytest.mark.parametrize(
    ("patch", "tests", "reason"),
    [
        (["src/app.ts"], ["src/app.spec.ts"], "language not supported: typescript"),
        (["R/model.R"], [], "language not supported: r"),
        (["Sources/FIRApp.m"], [], "language not supported: objective-c"),
    ],
)
def test_a_line_in_a_language_arena_does_not_run_is_refused_naming_it(
    patch: list[str], tests: list[str], reason: str
) -> None:
    report = import_lines([_line("python", patch, tests)], None)
    assert not report.tasks
    [error] = report.errors
    assert (error.line, error.field, error.reason) == (1, "language", reason)


@pytest.mark.parametrize("patch", [["install"], ["docs/usage.md"], ["CHANGELOG/CHANGELOG-3.5.md"]])
def test_a_fix_no_test_can_tell_from_none_is_refused(patch: list[str]) -> None:
    """No source file of any language and no gold test: whatever the repo, nothing it runs
    can tell the fix from no fix."""
    report = import_lines([_line("python", patch, [])], None)
    assert not report.tasks
    [error] = report.errors
    assert (error.field, error.reason) == ("patch", "gold patch changes no code")


_GO_REPO = {"go.mod": "module octo\n", "cmd/main.go": "package main\n", "pkg/a.go": "package pkg\n"}
_PY_REPO = {"setup.py": "", "octo/__init__.py": "", "tests/test_octo.py": ""}
_VENDORED_GO = {f"vendor/dep{n}/x.go": "package x\n" for n in range(20)}


@pytest.mark.parametrize(
    ("files", "reason", "says"),
    [
        (_GO_REPO, "language mislabelled", "the repo is written in go"),
        (_PY_REPO, "gold patch changes no code", "the repo is written in python"),
        # another project's Go code kept in the repo does not make it a Go repo
        ({**_PY_REPO, **_VENDORED_GO}, "gold patch changes no code", "written in python"),
        ({"README.md": "", "docs/x.md": ""}, "gold patch changes no code", "no language"),
    ],
)
def test_the_repos_own_files_say_whether_such_a_line_is_mislabelled(
    files: dict[str, str], reason: str, says: str, make_repo: MakeRepo, tmp_path: Path
) -> None:
    repo, commit = make_repo({**files, "docs/usage.md": "old\n"})
    line = json.loads(_line("python", ["docs/usage.md"], []))
    line.update(repo=repo, base_commit=commit)
    workspaces = Workspaces(tmp_path / "mirrors", tmp_path / "runs")
    report = import_lines([json.dumps(line)], workspaces)
    assert not report.tasks
    [error] = report.errors
    assert error.reason == reason
    assert says in error.message
