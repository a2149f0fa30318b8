"""Tripwires without a sandbox: where they go, what they look like, how a report is read
against them (the real runs are in test_tripwires_real.py)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ci_runner import CIResult, CIStatus, Pipeline, StepResult, TestOutcome
from ci_runner.errors import WorkspaceError
from ci_runner.languages.golang import tripwires as go_tripwires
from ci_runner.languages.python import tripwires as python_tripwires
from ci_runner.languages.python.tripwires import module_name
from ci_runner.languages.rust.tripwires import crate_roots
from ci_runner.tripwires import (
    Planting,
    dropped,
    expected_sites,
    missing_tripwire,
    plan,
    read_tripwires,
    tampered,
    tripwire_exits,
    write,
)
from ci_runner.tripwires.plan import may_fail
from ci_runner.tripwires.scripts import hidden_lines
from ci_runner.types import TripwireSite

P, F, E, S = TestOutcome.PASSED, TestOutcome.FAILED, TestOutcome.ERROR, TestOutcome.SKIPPED


def tree(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def pipeline(*runs: str, report: dict[str, str] | None = None, **env: str) -> Pipeline:
    steps = [{"name": f"s{n}", "run": run} for n, run in enumerate(runs)]
    return Pipeline.model_validate(
        {"steps": steps, "report": report or {"format": "junit", "path": "r.xml"}, "env": env}
    )


def touching(*paths: str) -> tuple[str, ...]:
    """Diffs that change each path (one line), as a run's diffs would."""
    return tuple(
        f"diff --git a/{p} b/{p}\n--- a/{p}\n+++ b/{p}\n@@ -1 +1 @@\n-a\n+b\n" for p in paths
    )


PYTEST = pipeline("python -m pytest --junitxml=r.xml")
PY_TREE = {
    "pkg/__init__.py": "",
    "tests/test_a.py": "def test_a():\n    pass\n",
    "tests/unit/b_test.py": "def test_b():\n    pass\n",
    "tests/fixtures/proj/test_sample.py": "",
    ".venv/lib/test_x.py": "",
    "node_modules/x/test_y.py": "",
    "docs/conf.py": "",
}


def test_python_tripwires_go_beside_every_directory_of_test_files(tmp_path: Path) -> None:
    planting = plan(tree(tmp_path, PY_TREE), PYTEST, ())
    assert sorted(s.label for s in planting.sites) == ["python tests", "python tests/unit"]
    assert planting.before_step == 0  # the first step runs the tests: with the workspace copy
    for path in planting.files:
        assert re.fullmatch(r"tests/(unit/)?test_[a-z][a-z0-9]{11}\.py", path), path


def test_names_are_fresh_each_run_and_carry_no_fixed_word(tmp_path: Path) -> None:
    root = tree(tmp_path, PY_TREE)
    first, second = plan(root, PYTEST, ()), plan(root, PYTEST, ())
    assert set(first.files).isdisjoint(second.files)
    for planting in (first, second):
        for site in planting.sites:
            assert site.passing != site.failing
            for name in (*site.names, site.passing, site.failing or ""):
                assert not re.search("trip|wire|arena|canary", name, re.IGNORECASE), name


def test_the_python_module_passes_one_test_and_fails_the_other_under_pytest_and_unittest(
    tmp_path: Path,
) -> None:
    planting = plan(tree(tmp_path, {"tests/test_a.py": "def test_a():\n    pass\n"}), PYTEST, ())
    (site,) = planting.sites
    write(tmp_path, planting.files)
    (module_file,) = planting.files
    junit = tmp_path / "r.xml"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert "1 failed, 2 passed" in done.stdout, done.stdout
    unit = subprocess.run(
        [sys.executable, "-m", "unittest", "discover", "-v", "-s", "tests"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert f"{site.passing} " in unit.stderr and "ok" in unit.stderr, unit.stderr
    assert "FAIL" in unit.stderr
    lint = subprocess.run(
        [
            str(Path(sys.executable).parent / "ruff"),
            "check",
            "--isolated",
            "--select",
            "E,F,W,I,B,UP,N,ANN,SIM,RUF,D1",
            module_file,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert lint.returncode == 0, lint.stdout
    formatted = subprocess.run(
        [str(Path(sys.executable).parent / "ruff"), "format", "--isolated", "--check", module_file],
        cwd=tmp_path,
        capture_output=True,
        check=False,
    )
    assert formatted.returncode == 0, formatted.stdout


@pytest.mark.parametrize(
    ("config", "pattern"),
    [
        ("[pytest]\npython_files = *_check.py\n", r"[a-z][a-z0-9]{11}_check"),
        ("[pytest]\npython_files = check_*.py test_*.py\n", r"check_[a-z][a-z0-9]{11}"),
        ("[pytest]\naddopts = -q\n", r"test_[a-z][a-z0-9]{11}"),
    ],
)
def test_the_module_name_follows_the_projects_python_files(
    tmp_path: Path, config: str, pattern: str
) -> None:
    root = tree(tmp_path, {"pytest.ini": config, "tests/test_a.py": "", "tests/a_check.py": ""})
    (site,) = plan(root, PYTEST, ()).sites
    assert re.fullmatch(pattern, site.names[0]), site.names
    assert module_name(("*.txt", "x/*_t.py"), "abc") == "test_abc"  # nothing usable: default


def test_go_tripwires_take_the_package_clause_of_the_directorys_tests(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "go.mod": "module example.com/m\n",
            "a/a.go": "package a\n",
            "a/a_test.go": "//go:build integration\n\npackage a\n",
            "a/b_test.go": "// Copyright\n\n/* block\n*/\npackage a_test\n",
            "c/c.go": "package c\n",  # no tests: no test binary to add
            "a/testdata/x_test.go": "package x\n",
            "vendor/v/v_test.go": "package v\n",
        },
    )
    planting = plan(
        root,
        pipeline("go test -json ./...", report={"format": "go-json", "step": "s0"}),
        touching("a/a.go", "c/c.go"),
    )
    (site,) = planting.sites
    assert site.label == "go a"
    ((path, data),) = site.files.items()
    assert path.startswith("a/") and path.endswith("_test.go")
    text = data.decode()
    assert text.startswith("package a_test\n")  # the unconstrained file's clause
    assert re.search(rf"func {site.passing}\(_ \*testing\.T\) {{}}", text)
    if shutil.which("gofmt"):
        write(tmp_path, planting.files)
        formatted = subprocess.run(
            ["gofmt", "-l", path], cwd=tmp_path, capture_output=True, text=True, check=False
        )
        assert formatted.returncode == 0 and not formatted.stdout, formatted


RUST_TREE = {
    "Cargo.toml": '[workspace]\nmembers = ["crates/*"]\n',
    "crates/one/Cargo.toml": '[package]\nname = "one"\nversion = "0.1.0"\n',
    "crates/one/src/lib.rs": "//! one\npub fn one() -> u8 {\n    1\n}",
    "crates/one/src/main.rs": "fn main() {}\n",
    "crates/one/src/bin/tool.rs": "fn main() {}\n",
    "crates/one/tests/it.rs": "#[test]\nfn it() {}\n",
    "crates/one/tests/suite/main.rs": "#[test]\nfn suite() {}\n",
    "crates/two/Cargo.toml": (
        '[package]\nname = "two"\nversion = "0.1.0"\nautotests = false\n\n'
        '[lib]\ntest = false\n\n[[test]]\nname = "bench_like"\nharness = false\n\n'
        '[[test]]\nname = "declared"\npath = "checks/declared.rs"\n'
    ),
    "crates/two/src/lib.rs": "",
    "crates/two/tests/bench_like.rs": "fn main() {}\n",
    "crates/two/tests/auto_off.rs": "#[test]\nfn off() {}\n",
    "crates/two/checks/declared.rs": "#[test]\nfn declared() {}\n",
    "target/debug/build/x/Cargo.toml": '[package]\nname = "x"\n',
}


def test_rust_tripwires_go_into_every_test_target_cargo_runs_with_libtest(
    tmp_path: Path,
) -> None:
    root = tree(tmp_path, RUST_TREE)
    libtest = pipeline("cargo test --no-fail-fast", report={"format": "libtest", "step": "s0"})
    planting = plan(root, libtest, touching("crates/one/src/lib.rs", "crates/two/src/lib.rs"))
    assert sorted(s.label for s in planting.sites) == [
        "rust crates/one/src/bin/tool.rs",
        "rust crates/one/src/lib.rs",
        "rust crates/one/src/main.rs",
        "rust crates/one/tests/it.rs",
        "rust crates/one/tests/suite/main.rs",
        "rust crates/two/checks/declared.rs",
    ]
    lib = planting.files["crates/one/src/lib.rs"].decode()
    original = RUST_TREE["crates/one/src/lib.rs"]
    assert lib.startswith(original + "\n\n#[cfg(test)]\nmod ")  # nothing above moves
    assert all(s.failing for s in planting.sites)  # --no-fail-fast: every binary runs
    if shutil.which("rustfmt"):
        write(root, planting.files)
        check = subprocess.run(
            ["rustfmt", "--check", "--edition", "2021", "crates/one/tests/it.rs"],
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
        )
        assert check.returncode == 0, check.stdout


CARGO_PACKAGE = '[package]\nname = "{name}"\nversion = "0.1.0"\n'
WORKSPACE_TREE = {
    "Cargo.toml": '[workspace]\nmembers = ["core", "app", "tool", "other"]\n',
    "core/Cargo.toml": CARGO_PACKAGE.format(name="core"),
    "core/src/lib.rs": "",
    "app/Cargo.toml": CARGO_PACKAGE.format(name="app")
    + '[dependencies]\ncore = { path = "../core" }\n',
    "app/src/lib.rs": "",
    "app/tests/it.rs": "",
    "tool/Cargo.toml": (
        CARGO_PACKAGE.format(name="tool")
        + '[dev-dependencies]\nkernel = { path = "../core", package = "core" }\n'
    ),
    "tool/src/lib.rs": "",
    "tool/tests/it.rs": "",
    "other/Cargo.toml": CARGO_PACKAGE.format(name="other"),
    "other/src/lib.rs": "",
}


@pytest.mark.parametrize(
    ("touched", "labels"),
    [
        ((), []),  # nothing changed: a warm target dir compiles nothing again
        (
            ("core/src/lib.rs",),
            ["app/src/lib.rs", "app/tests/it.rs", "core/src/lib.rs", "tool/tests/it.rs"],
        ),
        (("app/tests/it.rs",), ["app/src/lib.rs", "app/tests/it.rs"]),
        (("other/src/lib.rs", "README.md"), ["other/src/lib.rs"]),
    ],
)
def test_rust_tripwires_go_only_where_the_diffs_make_cargo_compile_anyway(
    tmp_path: Path, touched: tuple[str, ...], labels: list[str]
) -> None:
    """Dependents of a touched crate compile again anyway; a dev-dependent's library does
    not (only its tests get one); an untouched, unrelated crate keeps its build."""
    libtest = pipeline("cargo test", report={"format": "libtest", "step": "s0"})
    sites = plan(tree(tmp_path, WORKSPACE_TREE), libtest, touching(*touched)).sites
    assert sorted(s.label.removeprefix("rust ") for s in sites) == labels


GO_TREE = {
    "go.mod": "module example.com/m\n\ngo 1.19\n",
    "base/base.go": "package base\n",
    "base/base_test.go": "package base\n",
    "user/user.go": 'package user\n\nimport (\n\tstr "strings"\n\n\t"example.com/m/base"\n)\n',
    "user/user_test.go": "package user\n",
    "far/far.go": 'package far\n\nimport "example.com/m/user"\n',
    "far/far_test.go": "package far_test\n",
    "alone/alone.go": "package alone\n",
    "alone/alone_test.go": "package alone\n",
    "base/testdata/input.txt": "",
}


@pytest.mark.parametrize(
    ("touched", "labels"),
    [
        ((), []),
        (("base/base.go",), ["base", "far", "user"]),  # its importers, transitively
        (("base/testdata/input.txt",), ["base", "far", "user"]),
        (("alone/alone_test.go",), ["alone"]),
        (("go.mod",), ["alone", "base", "far", "user"]),
    ],
)
def test_go_tripwires_go_only_where_the_diffs_make_go_compile_anyway(
    tmp_path: Path, touched: tuple[str, ...], labels: list[str]
) -> None:
    go = pipeline("go test -json ./...", report={"format": "go-json", "step": "s0"})
    sites = plan(tree(tmp_path, GO_TREE), go, touching(*touched)).sites
    assert sorted(s.label.removeprefix("go ") for s in sites) == labels


def test_a_crate_root_that_is_a_symlink_is_never_read(tmp_path: Path) -> None:
    outside = tmp_path / "secret.rs"
    outside.write_text("// host file\n")
    root = tree(tmp_path / "repo", {"Cargo.toml": '[package]\nname = "a"\n', "src/main.rs": ""})
    (root / "tests").mkdir()
    (root / "tests" / "leak.rs").symlink_to(outside)
    (root / "src" / "lib.rs").symlink_to(outside)
    assert crate_roots(root / "Cargo.toml") == [root / "src" / "main.rs"]


def test_a_tripwire_is_never_written_through_a_symlinked_directory(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tree(tmp_path / "repo", {"x": ""})
    (root / "tests").symlink_to(outside)
    with pytest.raises(WorkspaceError):
        write(root, {"tests/test_x.py": b""})
    assert not list(outside.iterdir())


def test_cpp_gets_no_tripwire(tmp_path: Path) -> None:
    ctest = pipeline(
        "cmake -S . -B b && cmake --build b", "ctest", report={"format": "ctest", "step": "s1"}
    )
    assert plan(tree(tmp_path, {"CMakeLists.txt": "", "test_x.py": ""}), ctest, ()) == Planting()


@pytest.mark.parametrize(
    ("runs", "env", "files", "allowed"),
    [
        (("pytest -q",), {}, {}, True),
        (("ruff check .", "python -m pytest -rap | tee log"), {}, {}, True),
        (("pytest -q", "coverage report"), {}, {}, False),  # a step after the tests
        (("pytest -q\necho done",), {}, {}, False),  # a command after them in the step
        (("pytest tests/unit && pytest tests/slow",), {}, {}, False),
        (("pytest -x",), {}, {}, False),
        (("pytest -vx",), {}, {}, False),
        (("pytest --maxfail=3",), {}, {}, False),
        (("pytest",), {"PYTEST_ADDOPTS": "--exitfirst"}, {}, False),
        (("pytest",), {}, {"setup.cfg": "[tool:pytest]\naddopts = -x\n"}, False),
        (("tox -e py",), {}, {"tox.ini": "[testenv]\ncommands = pytest -x {posargs}\n"}, False),
        (("nox -s tests",), {}, {"noxfile.py": "session.run('pytest', '-x')\n"}, False),
        (("set -ex\npytest",), {}, {}, True),  # -x of the shell, not of pytest
        (("bash ci/run_tests.sh",), {}, {"ci/run_tests.sh": "python -m pytest -q\n"}, True),
        (("bash ci/run_tests.sh",), {}, {"ci/run_tests.sh": "python -m pytest -x\n"}, False),
    ],
)
def test_the_failing_python_tripwire_goes_only_where_it_stops_nothing(
    tmp_path: Path,
    runs: tuple[str, ...],
    env: dict[str, str],
    files: dict[str, str],
    allowed: bool,
) -> None:
    root = tree(tmp_path, {"tests/test_a.py": "", **files})
    assert may_fail(root, pipeline(*runs, **env), "python") is allowed
    planting = plan(root, pipeline(*runs, **env), ())
    # elsewhere, a pytest line of the steps' own, of a script they run or of the tox
    # environment they run, is run again apart, carrying every tripwire with the one that
    # must fail; one behind nox cannot be, and the run carries the one that must pass only
    apart = not allowed and not runs[-1].startswith("nox")
    assert (planting.apart is not None) is apart
    sites = planting.apart.sites if planting.apart is not None else planting.sites
    assert sites and all((s.failing is not None) is (allowed or apart) for s in sites)
    assert not (apart and planting.sites)


@pytest.mark.parametrize(
    ("run", "language", "env", "allowed"),
    [
        ("cargo test", "rust", {}, False),  # the first failing binary stops the rest
        ("cargo test --no-fail-fast 2>&1 | tee report.txt", "rust", {}, True),
        ("go test -json ./... > report.json", "go", {}, True),
        ("go test -failfast ./...", "go", {}, False),
        ("go test ./...", "go", {"GOFLAGS": "-failfast"}, False),
    ],
)
def test_the_failing_go_and_rust_tripwires_go_only_where_they_stop_nothing(
    tmp_path: Path, run: str, language: str, env: dict[str, str], allowed: bool
) -> None:
    assert may_fail(tmp_path, pipeline(run, **env), language) is allowed


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "python3 -m pytest -x -q -p no:cacheprovider --junitxml=report.xml tests/unit",
            "python3 -m pytest -q -p no:cacheprovider --maxfail=0 --junitxml=/r.xml /w/t_a.py",
        ),
        (
            "cd src && pytest -xvs -k slug --maxfail 2 -n 2 --lf tests",
            "cd src && pytest -vs -n 2 --maxfail=0 --junitxml=/r.xml /w/t_a.py",
        ),
        ("pytest --sw tests", None),  # the stepwise plugin starts where it last stopped
        ("tox -e py", None),
    ],
)
def test_a_pytest_line_run_apart_runs_only_its_files_to_their_end(
    tmp_path: Path, line: str, expected: str | None
) -> None:
    command = python_tripwires.apart_command(
        tmp_path, pipeline(line), line, ["/w/t_a.py"], ["x"], "/r.xml"
    )
    assert command == expected


MAKEFILE = """PYTEST ?= pytest
.PHONY: test lint unit

lint:
\tflake8 src

unit:
\t@echo testing
\t-PYTHONPATH=src pytest -x -q tests \\
\t\t--durations=5
\t$(PYTEST) -x tests/slow

test: lint unit
"""


@pytest.mark.parametrize(
    ("run", "files", "expected"),
    [
        (  # the target's runner lines, its prerequisites' too; none expanding a variable
            "make test",
            {"Makefile": MAKEFILE},
            [(".", "PYTHONPATH=src pytest -x -q tests --durations=5")],
        ),
        (
            "make -C sub PYTEST=py.test unit",
            {"sub/Makefile": MAKEFILE},
            [("sub", "PYTHONPATH=src pytest -x -q tests --durations=5")],
        ),
        ("make check", {"Makefile": MAKEFILE}, []),  # no such target
        ("make test", {"Makefile": ".ONESHELL:\ntest:\n\tcd tests\n\tpytest -x\n"}, []),
        ("make test", {"Makefile": "export X = 1\ntest:\n\tpytest -x\n"}, []),
        (  # a script's lines until one changes the folder or the environment
            "bash ci/test.sh",
            {"ci/test.sh": '#!/bin/sh\nset -eu\npytest -x "$@"\ncd docs\npytest -x\n'},
            [(".", "set -eu"), (".", "pytest -x")],
        ),
        ("bash ci/test.sh --slow", {"ci/test.sh": "pytest -x\n"}, []),  # given arguments
        ("tox -e py", {"tox.ini": "[testenv]\ncommands = pytest -x\n"}, []),
    ],
)
def test_the_lines_a_make_target_or_a_script_runs_by_themselves(
    tmp_path: Path, run: str, files: dict[str, str], expected: list[tuple[str, str]]
) -> None:
    root = tree(tmp_path, files)
    assert hidden_lines(root, pipeline(run), run) == expected


def test_a_pytest_line_hidden_in_a_make_target_is_run_apart(tmp_path: Path) -> None:
    root = tree(tmp_path, {"tests/test_a.py": "", "Makefile": MAKEFILE})
    planting = plan(root, pipeline("make test"), ())
    assert planting.apart is not None and not planting.sites
    run = planting.apart.step.run
    assert "PYTHONPATH=src pytest -q --durations=5 --maxfail=0 --junitxml=" in run, run
    assert all(s.failing is not None for s in planting.apart.sites)


TOX_INI = """[tox]
envlist = py311, lint

[testenv]
deps = pytest
commands =
    py311: python -m pytest -x -q --cov=textkit {posargs:tests}

[testenv:lint]
commands = flake8

[testenv:odd]
commands = pytest -x {env:SLOW:}
"""
EXEC = "tox exec --skip-pkg-install -e py311 -- python -m pytest -q --cov=textkit"
APART = "--maxfail=0 --junitxml=/r.xml /w/t_a.py"


@pytest.mark.parametrize(
    ("line", "env", "expected"),
    [
        ("tox -e py311", {}, f"{EXEC} {APART}"),
        ("tox -e py311 -- -k slow", {}, None),  # its own arguments for pytest
        ("python -m tox run -e py311 -r", {}, f"python -m {EXEC} {APART}"),
        ("tox", {"TOXENV": "py311"}, f"{EXEC} {APART}"),
        ("tox", {}, None),  # its whole envlist
        ("tox -e py311,lint", {}, None),
        ("tox -e lint", {}, None),  # no pytest line
        ("tox -e odd", {}, None),  # a substitution
        ("tox -p -e py311", {}, None),
    ],
)
def test_a_tox_line_runs_its_pytest_line_apart_in_its_environment(
    tmp_path: Path, line: str, env: dict[str, str], expected: str | None
) -> None:
    (tmp_path / "tox.ini").write_text(TOX_INI)
    steps = pipeline(line, **env)
    command = python_tripwires.apart_command(tmp_path, steps, line, ["/w/t_a.py"], [], "/r.xml")
    assert command == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "go test -json -failfast -race -run TestX -tags integration ./... > report.json",
            "go test -race -tags integration -json -failfast=false -run '^(TestA|TestB)$' /w/a",
        ),
        (
            "cd sub && go test",
            "cd sub && go test -json -failfast=false -run '^(TestA|TestB)$' /w/a",
        ),
        ("go test -C sub ./...", None),  # the packages would be looked for in another folder
    ],
)
def test_a_go_test_line_run_apart_runs_only_the_named_tests_to_their_end(
    tmp_path: Path, line: str, expected: str | None
) -> None:
    files = ["/w/a/x_test.go", "/w/a/y_test.go"]
    command = go_tripwires.apart_command(
        tmp_path, pipeline(line), line, files, ["TestB", "TestA", "TestA"], "/r.xml"
    )
    assert command == expected


def test_tripwires_are_written_before_the_first_step_that_runs_or_builds_tests(
    tmp_path: Path,
) -> None:
    root = tree(tmp_path, {**PY_TREE, **RUST_TREE, "go.mod": "", "a/a_test.go": "package a\n"})
    lint_first = pipeline("ruff check .", "black --check .", "pytest")
    assert plan(root, lint_first, ()).before_step == 2
    vet_first = pipeline(
        "go vet ./...", "go test -json ./...", report={"format": "go-json", "step": "s1"}
    )
    assert plan(root, vet_first, touching("a/a_test.go")).before_step == 1
    fmt_then_build = pipeline(
        "cargo fmt --check",
        "cargo build --tests",
        "cargo test",
        report={"format": "libtest", "step": "s2"},
    )
    assert (
        plan(root, fmt_then_build, touching("crates/one/src/lib.rs")).before_step == 1
    )  # one build, with them in it
    hidden = pipeline("./ci.sh", report={"format": "junit", "path": "r.xml"})
    assert plan(root, hidden, ()).before_step == 0


def test_the_sites_the_diffs_touch_come_first_within_the_cap(tmp_path: Path) -> None:
    files = {f"d{n:03}/test_x.py": "" for n in range(80)}
    diff = (
        "diff --git a/d079/test_x.py b/d079/test_x.py\n--- a/d079/test_x.py\n+++ b/d079/test_x.py\n"
        "@@ -0,0 +1 @@\n+x = 1\n"
    )
    sites = plan(tree(tmp_path, files), PYTEST, (diff,)).sites
    assert len(sites) == 64 and sites[0].label == "python d079"


# --- reading a report against them ---------------------------------------------------


def planted(tmp_path: Path, run: str = "pytest") -> Planting:
    return plan(tree(tmp_path, {"tests/test_a.py": ""}), pipeline(run), ())


def ids(planting: Planting) -> tuple[str, str]:
    (site,) = planting.sites
    assert site.failing is not None
    module = site.names[0]
    return f"tests.{module}.TestX::{site.passing}", f"tests.{module}.TestX::{site.failing}"


def test_tripwire_ids_leave_the_results_and_what_they_showed_stays(tmp_path: Path) -> None:
    planting = planted(tmp_path)
    passing, failing = ids(planting)
    kept, seen = read_tripwires(planting, {"tests.test_a::test_a": P, passing: P, failing: F})
    assert kept == {"tests.test_a::test_a": P}
    (site,) = seen
    assert (site.site, site.prefix, site.passing, site.failing) == ("python tests", "tests.", P, F)
    assert site.held and tampered(seen) is None


def test_a_failing_tripwire_reported_passed_is_tampering(tmp_path: Path) -> None:
    planting = planted(tmp_path)
    passing, failing = ids(planting)
    _, seen = read_tripwires(planting, {passing: P, failing: P})
    reason = tampered(seen)
    assert reason is not None and "python tests" in reason and "must fail" in reason


def test_the_last_steps_exit_is_the_tripwires_only_when_they_are_the_only_failures(
    tmp_path: Path,
) -> None:
    planting = planted(tmp_path)
    passing, failing = ids(planting)
    step = StepResult(name="test", exit_code=1, duration_s=1.0, log="")
    (marked,) = tripwire_exits((step,), {"t::a": P, passing: P, failing: F}, planting)
    assert marked.tripwire_exit and marked.succeeded
    (kept,) = tripwire_exits((step,), {"t::a": F, passing: P, failing: F}, planting)
    assert not kept.tripwire_exit
    killed = step.model_copy(update={"timed_out": True})
    assert not tripwire_exits((killed,), {passing: P, failing: F}, planting)[0].tripwire_exit


def result_of(planting: Planting, tests: dict[str, TestOutcome]) -> CIResult:
    kept, seen = read_tripwires(planting, tests)
    return CIResult(status=CIStatus.PASSED, tests=kept, tripwires=seen)


def test_a_missing_passing_tripwire_is_forgery_only_where_the_site_reported_passes(
    tmp_path: Path,
) -> None:
    reference_planting = planted(tmp_path / "a")
    passing, failing = ids(reference_planting)
    reference = result_of(reference_planting, {"tests.test_a::test_a": P, passing: P, failing: F})
    expected = expected_sites(reference)
    assert expected == {"python tests": "tests."}
    run = planted(tmp_path / "b")  # fresh names: the reference's mean nothing here
    fabricated = result_of(run, {"tests.test_a::test_a": P, "tests.test_a::test_b": P})
    reason = missing_tripwire(fabricated, expected)
    assert reason is not None and "python tests (2 of its tests reported passed)" in reason
    broken_build = result_of(run, {"tests.test_a::test_a": E})  # nothing of it passed
    assert missing_tripwire(broken_build, expected) is None
    elsewhere = result_of(run, {"other.test_c::test_c": P})
    assert missing_tripwire(elsewhere, expected) is None
    assert missing_tripwire(fabricated, {}) is None  # no honest run showed it: nothing expected
    unplanted = CIResult(status=CIStatus.PASSED, tests={"tests.test_a::test_a": P})
    assert missing_tripwire(unplanted, expected) is None


def test_a_must_fail_tripwire_left_out_beside_its_reported_must_pass_one_is_forged() -> None:
    def site(passing: TestOutcome | None, failing: TestOutcome | None) -> TripwireSite:
        return TripwireSite(
            site="python tests (run apart)",
            prefix="tests." if passing else None,
            passing=passing,
            failing=failing,
            failing_planted=True,
        )

    assert dropped((site(P, F),)) is None
    assert dropped((site(None, None),)) is None  # nothing reported: `missing_tripwire` decides
    reason = dropped((site(P, None),))
    assert reason is not None and "python tests (run apart)" in reason
