"""SwingArena's published files import unmodified; their CI jobs resolve like GitHub Actions."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from arena.tasks.importer import import_jsonl, import_lines, read_hf_export
from arena.tasks.schema import Language, TaskError, TaskKind
from ci_runner import CISettings
from ci_runner.workflows import ANY_JOB, JobRef
from ci_runner.workspace import Workspaces
from tests.ci_runner.projects import PYTHON
from tests.command import run_arena
from tests.conftest import MakeRepo
from tests.shared_data import shared_data

SAMPLE = shared_data() / "swingarena-sample"
W = ".github/workflows/"

# what each line of the sample must import as: language, job list, kind
EXPECTED: dict[str, tuple[Language, list[tuple[str, str]], TaskKind]] = {
    "leil-io__saunafs-237": (
        Language("cpp"),
        [("Run-Unit-Tests-and-Ganesha", W + "run-unit-and-ganesha-tests.yml")],
        TaskKind.CI_JUDGED,
    ),
    "doctest__doctest-878": (Language("cpp"), [], TaskKind.CI_JUDGED),  # 35 entries, checked below
    "zeux__meshoptimizer-882": (
        Language("cpp"),
        [
            ("macos-arm", W + "build.yml"),
            ("windows (x64)", W + "build.yml"),
            ("gltfpack-js", W + "build.yml"),
            ("windows (Win32)", W + "build.yml"),
            ("Fuzzing", W + "cifuzz.yml"),
            ("gltfpack-coverage", W + "build.yml"),
            ("gltfpack", W + "build.yml"),
        ],
        TaskKind.GOLD_JUDGED,
    ),
    "syngit-org__syngit-102": (
        Language("go"),
        [
            ("Lint the code", W + "lint.yml"),
            ("Helm install test", W + "tests.yml"),
            ("Build & deploy tests", W + "tests.yml"),
        ],
        TaskKind.CI_JUDGED,
    ),
    "algorandfoundation__nodekit-104": (
        Language("go"),
        [("build", W + "code_test.yaml")],
        TaskKind.CI_JUDGED,
    ),
    "ipfs__boxo-621": (
        Language("go"),
        [
            ("Changelog", W + "changelog.yml"),
            ("ubuntu (go next)", W + "go-test.yml"),
            ("local-block-backend", W + "gateway-conformance.yml"),
            ("windows (go this)", W + "go-test.yml"),
            ("remote-block-backend", W + "gateway-conformance.yml"),
            ("remote-car-backend", W + "gateway-conformance.yml"),
        ],
        TaskKind.CI_JUDGED,
    ),
    "vllm-project__vllm-10134": (
        Language("python"),
        [
            ("ruff (3.12)", W + "ruff.yml"),
            ("yapf (3.12)", W + "yapf.yml"),
            ("mypy (3.12)", W + "mypy.yaml"),
            ("mypy (3.10)", W + "mypy.yaml"),
        ],
        TaskKind.GOLD_JUDGED,
    ),
    "dask__dask-expr-1067": (
        Language("python"),
        [("test (3.12, ci/environment.yml)", W + "dask_test.yaml")],
        TaskKind.GOLD_JUDGED,
    ),
    "google__turbinia-1515": (
        Language("python"),
        [
            (
                "Install Turbinia dependencies and run tests. (ubuntu-22.04, stable)",
                W + "actions.yml",
            ),
            (
                "Install Turbinia dependencies and run tests. (ubuntu-22.04, staging)",
                W + "actions.yml",
            ),
        ],
        TaskKind.GOLD_JUDGED,
    ),
    "duesee__imap-codec-561": (
        Language("rust"),
        [
            ("minimal_versions", W + "main.yml"),
            ("audit", W + "audit.yml"),
            ("test (windows-latest)", W + "main.yml"),
            ("fuzz", W + "main.yml"),
            ("bindings", W + "main.yml"),
        ],
        TaskKind.GOLD_JUDGED,
    ),
    "linebender__resvg-813": (  # pairs written as Python-repr strings
        Language("rust"),
        [("msrv", W + "main.yml"), ("windows", W + "main.yml")],
        TaskKind.CI_JUDGED,
    ),
    "ashvardanian__StringZilla-202": (
        Language("rust"),
        [
            ("Update Version", W + "prerelease.yml"),
            ("Swift on Linux", W + "prerelease.yml"),
            ("Ubuntu (Clang 16)", W + "prerelease.yml"),
            ("Cross Compilation (amd64, x86_64-linux-gnu)", W + "prerelease.yml"),
            ("Windows", W + "prerelease.yml"),
            ("Alpine Linux", W + "prerelease.yml"),
        ],
        TaskKind.GOLD_JUDGED,
    ),
}


def _arena(args: list[str], cache: Path) -> subprocess.CompletedProcess[str]:
    return run_arena(args, ARENA_CACHE_DIR=str(cache))


def test_every_sample_file_imports_unmodified_with_no_check(tmp_path: Path) -> None:
    files = sorted(SAMPLE.glob("*_filtered_instance_list.jsonl"))
    assert len(files) == 4
    for path in files:
        done = _arena(["tasks", "import", "--no-check", str(path)], tmp_path)
        assert done.returncode == 0, done.stderr
        assert "imported 3 task(s)" in done.stdout and "skipped" not in done.stdout
    library = [json.loads(line) for line in (tmp_path / "tasks.jsonl").read_text().splitlines()]
    report = import_jsonl(tmp_path / "tasks.jsonl", None)  # the library reads back
    assert not report.errors
    tasks = {t.instance_id: t for t in report.tasks}
    assert sorted(tasks) == sorted(EXPECTED) and len(library) == 12
    # StringZilla's fix and tests are C++ only, filed under Rust: it runs as C++, and says so
    filed_elsewhere = tasks["ashvardanian__StringZilla-202"]
    assert (filed_elsewhere.language, filed_elsewhere.filed_language) == (Language("cpp"), "rust")
    for instance_id, (language, jobs, kind) in EXPECTED.items():
        task = tasks[instance_id]
        if instance_id == "ashvardanian__StringZilla-202":
            language = Language("cpp")
        assert task.language is language, instance_id
        assert task.filed_language is None or instance_id == filed_elsewhere.instance_id
        assert task.kind is kind, instance_id
        assert task.pipeline is None  # derived when the repo can be read
        if jobs:
            assert [(j.name, j.workflow) for j in task.ci_name_list] == jobs, instance_id
    doctest = tasks["doctest__doctest-878"].ci_name_list
    assert len(doctest) == 35 and doctest[0] == JobRef(
        "ci (ubuntu-latest, clang, 14)", W + "main.yml"
    )
    assert all(j.workflow == W + "main.yml" for j in doctest)


def test_ci_name_list_shapes_and_language_rules(tmp_path: Path) -> None:
    line = {"instance_id": "x-1", "repo": "o/r", "base_commit": "abc1234" + "0" * 33, "patch": "p"}
    shapes = [
        ["test"],
        [["test", ".github/workflows/ci.yml"]],
        ["['test', '.github/workflows/ci.yml']"],
        [["['a', 'w.yml']", "['b', 'w.yml']"]],
        '[["test", "ci.yml"]]',
        # names that begin with `[` are names unless the whole string is a list of names
        ["[1.21] test", "[Go=1.24.x|ldap=|etcd=]", "[1.21]"],
        [["[1.22] test", ".github/workflows/ci.yml"]],
        ["[__import__('os')]"],  # never evaluated: not a literal, so a name
        [],  # the dataset's empty lists: every workflow's own jobs are considered
        "[]",
    ]
    lines = [
        json.dumps(line | {"instance_id": f"x-{n}", "ci_name_list": s})
        for n, s in enumerate(shapes)
    ]
    lines.append(json.dumps(line | {"instance_id": "bad", "ci_name_list": [""]}))
    lines.append(json.dumps(line | {"instance_id": "own", "ci_name_list": [], "pipeline": None}))
    report = import_lines(lines, None, language=Language("go"))
    assert [list(t.ci_name_list) for t in report.tasks] == [
        [JobRef("test")],
        [JobRef("test", ".github/workflows/ci.yml")],
        [JobRef("test", ".github/workflows/ci.yml")],
        [JobRef("a", "w.yml"), JobRef("b", "w.yml")],
        [JobRef("test", "ci.yml")],
        [JobRef("[1.21] test"), JobRef("[Go=1.24.x|ldap=|etcd=]"), JobRef("[1.21]")],
        [JobRef("[1.22] test", ".github/workflows/ci.yml")],
        [JobRef("[__import__('os')]")],
        [JobRef(ANY_JOB)],
        [JobRef(ANY_JOB)],
        [JobRef(ANY_JOB)],
    ]
    assert all(t.language is Language("go") and t.kind is TaskKind.CI_JUDGED for t in report.tasks)
    assert [(e.line, e.field, e.reason) for e in report.errors] == [
        (11, "ci_name_list", "bad ci_name_list")
    ]
    nameless = tmp_path / "tasks.jsonl"
    nameless.write_text(json.dumps(line | {"ci_name_list": ["t"]}) + "\n")
    unknown = import_jsonl(nameless, None)
    assert unknown.skipped() == {"missing language": 1}
    named = tmp_path / "rust_filtered_instance_list.jsonl"
    named.write_text(nameless.read_text())
    assert import_jsonl(named, None).tasks[0].language is Language("rust")


WORKFLOW = """
name: CI
on: [push, pull_request]
env:
  INTEG_TESTS: yes
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: ruff check .
  tests:
    name: ${{ matrix.os }} (${{ matrix.python-version }})
    runs-on: ${{ matrix.os }}
    if: github.event_name != 'schedule'
    strategy:
      matrix:
        os: [ubuntu-latest, windows-latest]
        python-version: ["3.11", "3.12"]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python-version }}
      - name: System packages
        if: runner.os == 'Linux'
        run: sudo apt-get install -y --no-install-recommends libyaml-dev
      - name: Install tox
        run: python -m pip install tox
      - name: Tests
        if: ${{ !cancelled() }}
        run: tox -e py${{ matrix.python-version }}
      - name: Coverage
        if: matrix.python-version == '3.12' && github.ref == 'refs/heads/main'
        run: echo upload
"""
TOX_INI = "[tox]\nenv_list = py3.12\n\n[testenv]\ncommands = pytest -q {posargs}\n"


def test_a_local_repo_imports_and_resolves_its_matrix_leg(
    tmp_path: Path, make_repo: MakeRepo, ci_settings: CISettings
) -> None:
    repo, commit = make_repo(
        {**PYTHON.files, "tox.ini": TOX_INI, ".github/workflows/ci.yml": WORKFLOW}
    )
    line = {
        "repo": repo,
        "instance_id": "calc__calc-1",
        "base_commit": commit,
        "patch": PYTHON.fix,
        "test_patch": "",
        "FAIL_TO_PASS": [],
        "PASS_TO_PASS": [],
        "merge_commit_sha": "",
        "ci_name_list": [
            ["lint", ".github/workflows/ci.yml"],
            ["windows-latest (3.12)", ".github/workflows/ci.yml"],
            "['ubuntu-latest (3.12)', '.github/workflows/ci.yml']",
        ],
    }
    path = tmp_path / "python_filtered_instance_list.jsonl"
    path.write_text(json.dumps(line) + "\n")
    report = import_jsonl(path, Workspaces(ci_settings.mirrors_dir, ci_settings.runs_dir))
    assert report.errors == []
    (task,) = report.tasks
    assert task.language is Language("python") and task.kind is TaskKind.CI_JUDGED
    # the listed 3.12 leg's sibling on 3.11: this machine's Python without a deviation
    assert task.ci_job == "ubuntu-latest (3.11) @ .github/workflows/ci.yml"
    pipeline = task.require_pipeline()
    assert [(s.name, s.run) for s in pipeline.setup] == [
        ("System packages", "apt-get install -y --no-install-recommends libyaml-dev"),
        ("Install tox", "python -m pip install tox"),
    ]
    assert [(s.name, s.run) for s in pipeline.steps] == [("Tests", "tox -e py3.11")]
    assert pipeline.env["INTEG_TESTS"] == "yes"
    assert pipeline.env["TOX_OVERRIDE"] == "testenv.pass_env+=PYTEST_ADDOPTS"
    notes = "\n".join(task.workflow_notes)
    assert "job lint) (rank 2): kept: Linux (ubuntu-latest): a lint leg, not a test job" in notes
    assert "'windows-latest (3.12)' (.github/workflows/ci.yml job tests): dropped: runs on" in notes
    assert "leg 'ubuntu-latest (3.12)' (.github/workflows/ci.yml job tests) (rank " in notes
    assert "step 'Coverage' skipped: its if: (matrix.python-version == '3.12' && " in notes
    assert "uses actions/setup-python@v5 with python-version=3.11: provided by the image" in notes
    stored = type(task).model_validate_json(task.model_dump_json(by_alias=True))
    assert stored.workflow_notes == task.workflow_notes and stored.ci_name_list == task.ci_name_list


def test_skipped_lines_are_counted_per_reason(
    tmp_path: Path, make_repo: MakeRepo, ci_settings: CISettings
) -> None:
    repo, commit = make_repo({**PYTHON.files, ".github/workflows/ci.yml": WORKFLOW})
    good = {
        "instance_id": "ok",
        "repo": repo,
        "base_commit": commit,
        "language": "python",
        "ci_name_list": [["ubuntu-latest (3.11)", ".github/workflows/ci.yml"]],
    }
    lines = [
        json.dumps(good),
        json.dumps(good),
        json.dumps(good | {"instance_id": "win", "ci_name_list": ["windows-latest (3.11)"]}),
        json.dumps(good | {"instance_id": "lint", "ci_name_list": ["lint"]}),
        json.dumps(good | {"instance_id": "none", "ci_name_list": ["no-such-job"]}),
        json.dumps(good | {"instance_id": "gone", "base_commit": "f" * 40}),
        json.dumps({"instance_id": "nothing"}),
        "{oops",
    ]
    report = import_lines(lines, Workspaces(ci_settings.mirrors_dir, ci_settings.runs_dir))
    # a listed Windows leg gives way to its Linux sibling; a lint-only list to the same
    # workflow's test legs (fallbacks, ranked), so only the unknown job is refused
    assert [t.instance_id for t in report.tasks] == ["ok", "win", "lint"]
    assert report.skipped() == {
        "no usable CI job": 1,
        "duplicate": 1,
        "commit not in repo": 1,
        "missing language": 1,
        "not JSON": 1,
    }


def test_hf_exports_import_offline_and_take_the_first_linux_test_job(
    tmp_path: Path, make_repo: MakeRepo, ci_settings: CISettings
) -> None:
    repo, commit = make_repo({**PYTHON.files, ".github/workflows/ci.yml": WORKFLOW})
    swe_bench = {
        "instance_id": "calc__calc-2",
        "repo": repo,
        "base_commit": commit,
        "patch": PYTHON.fix,
        "test_patch": "diff --git a/t b/t\n",
        "FAIL_TO_PASS": '["test_calc.py::test_add"]',
        "PASS_TO_PASS": "[]",
        "version": "1.0",
        "environment_setup_commit": commit,
    }
    export = tmp_path / "swe.json"
    export.write_text(json.dumps([swe_bench]))  # a JSON array is read as well as JSON lines
    lines = read_hf_export(export)
    report = import_lines(
        lines,
        Workspaces(ci_settings.mirrors_dir, ci_settings.runs_dir),
        language=Language("python"),
        any_job=True,
    )
    assert report.errors == []
    (task,) = report.tasks
    assert task.kind is TaskKind.GOLD_JUDGED and task.ci_name_list == (JobRef("*"),)
    # the newest Python this machine has exactly (3.11; 3.12 would run on 3.13)
    assert task.ci_job == "ubuntu-latest (3.11) @ .github/workflows/ci.yml"
    assert task.fail_to_pass == ("test_calc.py::test_add",)
    with pytest.raises(TaskError, match="pyarrow"):
        read_hf_export(tmp_path / "data.parquet")
    with pytest.raises(TaskError, match="no such local file"):
        read_hf_export(tmp_path / "princeton-nlp")
