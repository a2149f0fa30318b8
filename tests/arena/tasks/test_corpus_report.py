"""The corpus report as a pure function: refused lines and library tasks in, stages and counts out;
refusals read from refused lines and merged by instance id."""

from __future__ import annotations

import csv
import io
import json

import pytest

from arena.tasks.importer import LineError
from arena.tasks.refusals import Refusal, merge_refusals, refusals_from
from arena.tasks.report import (
    Environment,
    LibraryTask,
    Stage,
    categorize,
    corpus_report,
    csv_text,
)
from arena.tasks.schema import Language, Task, Validation
from arena.tasks.trials import Fault, fault_of
from arena.tasks.unnamed_tests import MARK as UNNAMED_MARK
from ci_runner import Pipeline

STEPS = {"steps": [{"name": "t", "run": "pytest"}], "report": {"format": "junit", "path": "r.xml"}}
SETUP = Pipeline.model_validate({**STEPS, "setup": [{"name": "deps", "run": "pip install ."}]})
NO_SETUP = Pipeline.model_validate(STEPS)


def _task(instance_id: str, *, language: str = "python", **update: object) -> Task:
    base = Task(
        instance_id=instance_id,
        repo="https://example.com/r.git",
        base_commit="abcdef0" + "0" * 33,
        language=Language(language),
        pipeline=SETUP,
        test_patch="diff",
        patch="diff",
        ci_job="test (ubuntu-latest) @ .github/workflows/ci.yml",
        workflow_notes=(
            "leg test (windows-latest): dropped: Windows",
            "leg test (ubuntu-latest): usable",
            "chosen: leg test (ubuntu-latest)",
        ),
    )
    return base.model_copy(update=update)


def _validated(task: Task, valid: bool, reason: str | None = None) -> Task:
    verdict = Validation(valid=valid, reason=reason, fingerprint=task.fingerprint())
    return task.model_copy(update={"validation": verdict})


def _refusal(instance_id: str | None, reason: str, line: int = 1, **kw: str) -> Refusal:
    return Refusal(
        instance_id=instance_id,
        language=kw.get("language", "go"),
        repo=None,
        source_file=kw.get("source_file", "go_filtered_instance_list.jsonl"),
        line=line,
        field="repo",
        message="cannot clone",
        reason=reason,
    )


def test_each_instance_gets_the_last_stage_it_reached_and_why_it_stopped() -> None:
    playable = _validated(_task("p"), True)
    invalid = _validated(
        _task("i"), False, "no test fails without the gold patch and passes with it"
    )
    env_failed = _validated(_task("e"), False, "environment build failed: pip exploded")
    # PowerGridModel's runs: a compiler killed for memory in one, the disk full in another
    limits = _validated(
        _task("l"),
        False,
        "no test fails without the gold patch and passes with it (base + gold patch failed: "
        "step 'Build and test' failed with exit code 1: g++: fatal error: Killed signal "
        "terminated program cc1plus (the sandbox holds 2048 MiB of memory; ARENA_LIMITS "
        "memory_mb raises it))",
    )
    conda = _validated(
        _task("c", pipeline=None, ci_name_list=("test",)),
        False,
        "no pipeline: ci_name_list: the Linux test job among test needs conda, which Arena ...",
    )
    stale = _task("s").model_copy(
        update={"validation": Validation(valid=True, fingerprint="0" * 16)}
    )
    report = corpus_report(
        [_refusal("r", "repo not reachable"), _refusal(None, "not JSON", line=7)],
        [
            LibraryTask(playable),
            LibraryTask(invalid),
            LibraryTask(env_failed),
            LibraryTask(limits),
            LibraryTask(conda),
            LibraryTask(stale),
            LibraryTask(stale.model_copy(update={"instance_id": "s-built"}), Environment.BUILT),
            LibraryTask(_task("built"), Environment.BUILT),
            LibraryTask(_task("toolchain", pipeline=NO_SETUP)),
            LibraryTask(_task("unbuilt")),
            LibraryTask(_task("broken-env"), Environment.FAILED, "apt failed"),
            LibraryTask(_task("nocheck", pipeline=None, ci_name_list=("test",))),
        ],
    )
    got = {r.instance_id: (r.stage, r.category) for r in report.rows}
    assert got == {
        "r": (Stage.REFUSED, "repo not reachable"),
        "go_filtered_instance_list.jsonl:7": (Stage.REFUSED, "dataset line inconsistent"),
        "p": (Stage.PLAYABLE, None),
        "i": (Stage.ENVIRONMENT_BUILT, "gold tests do not fail without the fix"),
        "e": (Stage.IMPORTED, "environment build failed"),
        "l": (Stage.ENVIRONMENT_BUILT, "needs more than the sandbox's limits"),
        "c": (Stage.IMPORTED, "needs conda"),
        "s": (Stage.IMPORTED, "validation stale (task changed)"),
        "s-built": (Stage.ENVIRONMENT_BUILT, "validation stale (task changed)"),
        "built": (Stage.ENVIRONMENT_BUILT, "not yet validated"),
        "toolchain": (Stage.ENVIRONMENT_BUILT, "not yet validated"),
        "unbuilt": (Stage.IMPORTED, "not yet built"),
        "broken-env": (Stage.IMPORTED, "environment build failed"),
        "nocheck": (Stage.IMPORTED, "pipeline not derived"),
    }
    row = next(r for r in report.rows if r.instance_id == "p")
    assert row.chosen_leg == "test (ubuntu-latest) @ .github/workflows/ci.yml"
    assert row.legs_considered == 2
    refused = next(r for r in report.rows if r.instance_id == "r")
    assert refused.reason == "go_filtered_instance_list.jsonl line 1: repo: cannot clone"
    assert refused.legs_considered == 0 and refused.chosen_leg is None


def test_counts_per_language_and_stage_and_per_category() -> None:
    report = corpus_report(
        [_refusal("g1", "repo not reachable"), _refusal("g2", "repo not reachable")],
        [
            LibraryTask(_validated(_task("p1"), True)),
            LibraryTask(_task("p2")),
            LibraryTask(_task("r1", language="rust")),
        ],
    )
    assert report.by_language["go"][Stage.REFUSED] == 2
    assert report.by_language["python"] == {
        Stage.REFUSED: 0,
        Stage.IMPORTED: 1,
        Stage.ENVIRONMENT_BUILT: 0,
        Stage.VALIDATED: 0,
        Stage.PLAYABLE: 1,
    }
    assert report.reached("python", Stage.IMPORTED) == 2
    assert report.reached("go", Stage.IMPORTED) == 0
    first, second = report.by_category
    assert (first.category, first.stage, first.count) == ("repo not reachable", Stage.REFUSED, 2)
    assert first.by_language == {"go": 2}
    assert (second.category, second.count, second.by_language) == (
        "not yet built",
        2,
        {"python": 1, "rust": 1},
    )


def test_a_valid_task_whose_environment_now_fails_stops_at_validated() -> None:
    task = _validated(_task("v"), True)
    (row,) = corpus_report([], [LibraryTask(task, Environment.FAILED, "gone")]).rows
    assert (row.stage, row.category) == (Stage.VALIDATED, "environment build failed")


def test_a_library_task_outranks_its_refusal_from_a_later_import() -> None:
    report = corpus_report([_refusal("p", "repo not reachable")], [LibraryTask(_task("p"))])
    assert [(r.instance_id, r.stage) for r in report.rows] == [("p", Stage.IMPORTED)]


def test_importer_reasons_are_categories_and_validation_text_maps_to_a_few() -> None:
    assert categorize("repo not reachable") == "repo not reachable"
    assert categorize("Windows or macOS only") == "Windows or macOS only"  # a reason to come
    assert categorize("conda job (unsupported)") == "needs conda"
    assert categorize("missing base_commit") == "dataset line inconsistent"
    assert categorize("bad language") == "dataset line inconsistent"
    assert categorize("duplicate") == "dataset line inconsistent"
    v = {"validation": True}
    assert categorize("environment build failed: docker said no", **v) == (
        "environment build failed"
    )
    unreachable = (
        "environment build failed: ... Updating git repository `https://github.com/o/n`\n"
        "  [6] Could not resolve hostname (Could not resolve host: github.com); class=Net (12)"
    )
    assert categorize(unreachable, **v) == "needs a host this machine cannot reach"
    too_old = (  # crussella0129/CubiKan's let chains under trixie's Rust 1.85
        "environment build failed: environment of https://github.com/crussella0129/CubiKan at "
        "a08c269: the warm-up run of step 'Check workspace' could not set itself up (the Rust "
        "toolchain is too old: error[E0658]: `let` expressions in this position are unstable)"
    )
    assert categorize(too_old, **v) == "needs a newer toolchain than this machine has"
    not_served = (  # the Go proxy this machine reaches does not serve the version
        "environment build failed: collecting the dependencies for offline runs failed: go: "
        "github.com/o/m@v0.3.1: reading https://proxy.golang.org/github.com/o/m/@v/v0.3.1.zip: "
        "403 Forbidden\n\tserver response: This module version is not available."
    )
    assert categorize(not_served, **v) == "needs a host this machine cannot reach"
    service = (
        "environment build failed: environment of x at c6f8dc431ec9: service image "
        "'quay.io/coreos/etcd:v3.5.1' cannot run offline; known: postgres, mysql, redis"
    )
    assert categorize(service, **v) == "needs a service Arena does not run"
    ppa = (  # swig's install script, as its build ended (Launchpad is Ubuntu's, not Debian's)
        "environment build failed: environment of x at 4167b0275adc: setup step 'Install "
        "Dependencies (installs)' failed:\n+++ sudo add-apt-repository -y ppa:deadsnakes/ppa\n"
        'Traceback (most recent call last):\n  File "/usr/lib/python3/dist-packages/'
        "softwareproperties/ppa.py\", line 113, in lpteam\nAttributeError: 'NoneType' object "
        "has no attribute 'people'"
    )
    assert categorize(ppa, **v) == "needs an Ubuntu PPA"
    assert fault_of(categorize(ppa, **v)) is Fault.SCOPE
    assert categorize("the gold tests do not apply: hunk 2", **v) == (
        "gold patch or tests do not apply"
    )
    assert categorize("base + gold patch ran no test (failed: boom)", **v) == "no test ran"
    # as real runs said it (zeux/meshoptimizer's own harness, swig's install script offline)
    harness = "base + gold patch ran no test (error: the ctest report names no tests) (on ...)"
    assert categorize(harness, **v) == "tests ran, no report Arena reads"
    assert fault_of(categorize(harness, **v)) is Fault.ARENA
    unnamed = f"{harness}; {UNNAMED_MARK}"  # and its output names no test the gold tests add
    assert categorize(unnamed, **v) == "tests report no result by name"
    assert fault_of(categorize(unnamed, **v)) is Fault.REPOSITORY
    missing = (
        "base + gold patch ran no test (failed: step 'Install Dependencies' failed with exit "
        "code 127; report step 'Clean' did not run)"
    )
    assert categorize(missing, **v) == "a CI step's command is missing"
    assert categorize("the gold patch breaks tests that passed without it: a", **v) == (
        "gold patch breaks passing tests"
    )
    assert categorize("no pipeline: ci_name_list: job runs on windows-latest", **v) == (
        "Windows or macOS only"
    )
    assert categorize("no pipeline: ci_name_list: no usable Linux test job", **v) == (
        "no usable CI job"
    )
    assert categorize("something new", **v) == "invalid (other reason)"


def test_refusals_read_their_instance_language_and_repo_from_the_refused_line() -> None:
    lines = [
        json.dumps({"instance_id": "a", "repo": "o/r", "language": "Go"}),
        "{not json",
        json.dumps({"instance_id": "b"}),
        "",
    ]
    errors = [
        LineError(1, "repo", "cannot clone", "repo not reachable"),
        LineError(1, "base_commit", "second error of line 1", "bad base_commit"),
        LineError(2, "(line)", "not JSON: x", "not JSON"),
        LineError(3, "base_commit", "Field required", "missing base_commit"),
    ]
    found = refusals_from(lines, errors, "cpp_x.jsonl", Language("cpp"))
    assert [(r.key, r.language, r.repo, r.reason) for r in found] == [
        ("a", "go", "o/r", "repo not reachable"),
        ("cpp_x.jsonl:2", "cpp", None, "not JSON"),
        ("b", "cpp", None, "missing base_commit"),
    ]


def test_a_later_import_removes_refusals_and_replaces_those_of_the_same_key() -> None:
    kept = [
        _refusal("a", "repo not reachable"),
        _refusal("b", "repo not reachable"),
        _refusal(None, "not JSON", line=3, source_file="f.jsonl"),
        _refusal(None, "not JSON", line=3, source_file="other.jsonl"),
    ]
    merged = merge_refusals(kept, [_refusal("b", "commit not in repo")], ["a"], "f.jsonl")
    assert [(r.key, r.reason) for r in merged] == [
        ("b", "commit not in repo"),
        ("other.jsonl:3", "not JSON"),
    ]


def test_csv_has_a_row_per_instance_and_keeps_formulas_as_text() -> None:
    report = corpus_report([_refusal("=cmd", "repo not reachable")], [LibraryTask(_task("p"))])
    rows = list(csv.DictReader(io.StringIO(csv_text(report.rows))))
    assert [r["instance_id"] for r in rows] == ["'=cmd", "p"]
    assert rows[1]["stage"] == "imported" and rows[1]["legs_considered"] == "2"


@pytest.mark.parametrize(
    ("cell", "kept"),
    [
        ("=cmd", "'=cmd"),
        (" =1+2", "' =1+2"),  # a spreadsheet runs it past the spaces too
        ("\t@x", "'\t@x"),
        ("-", "'-"),
        ("a=b", "a=b"),
        ("repo-1", "repo-1"),
    ],
)
def test_every_cell_a_spreadsheet_would_run_is_kept_text(cell: str, kept: str) -> None:
    report = corpus_report([_refusal(cell, "repo not reachable")], [])
    rows = list(csv.DictReader(io.StringIO(csv_text(report.rows))))
    assert rows[0]["instance_id"] == kept
