"""Go tripwires: a `_test.go` file in each package directory that holds tests.

The file takes the package clause of a test file already there (`package lru` or
`package lru_test`), so it compiles into the same test binary as the package's tests: code
that takes over that binary (an `init` printing `--- PASS` lines, then `os.Exit(0)`) takes
over the tripwire too, and the passing one goes missing. Only directories with tests get
one: a package without tests would otherwise gain a test binary to compile and link. The
`go` tool skips `testdata`, `vendor` and names starting with `.` or `_`; so does this.
The file is gofmt-formatted and vet-clean.

A new file makes its package's test binary compile again and its results uncacheable, so a
warm build and test cache (an environment image's) would lose its worth if every package
got one. They go only where the run's code can reach and `go` compiles anyway: the packages
the run's diffs touch and those that import them, transitively, as their files' import
lines say (an `init` runs only in binaries that import its package); a change to go.mod
reaches every package. At most MAX_SITES.
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ci_runner.languages.golang.scope import GO_VALUE_FLAGS
from ci_runner.languages.shell import arguments, shell_words
from ci_runner.languages.sites import Site, plain_file, token
from ci_runner.pipeline import Pipeline
from ci_runner.tree_walk import walk

MAX_SITES = 32
HEAD_BYTES = 16 * 1024  # of each Go file, read for its imports
_PACKAGE = re.compile(r"^package\s+([A-Za-z_]\w*)")
_CONSTRAINT = re.compile(r"^//\s*(?:go:build|\+build)\s")

TEST_FILE = """package {package}

import "testing"

func {passing}(_ *testing.T) {{}}
{failing}"""
FAILING = """
func {failing}(t *testing.T) {{
\tt.Fatal("this test fails on purpose")
}}
"""


def skipped_dir(name: str) -> bool:
    return name.startswith((".", "_")) or name in ("testdata", "vendor", "node_modules")


def package_clause(path: Path) -> tuple[str, bool] | None:
    """The package a Go file declares, and whether a build constraint limits it."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return None
    constrained = False
    in_comment = False
    for raw in text.splitlines():
        line = raw.strip()
        if in_comment:
            in_comment = "*/" not in line
            continue
        if line.startswith("/*"):
            in_comment = "*/" not in line
            continue
        constrained = constrained or _CONSTRAINT.match(line) is not None
        if found := _PACKAGE.match(line):
            return found[1], constrained
    return None


_MODULE = re.compile(r"^module\s+(\S+)", re.MULTILINE)
_IMPORT_ONE = re.compile(r'^import\s+(?:[\w.]+\s+)?"([^"]+)"', re.MULTILINE)
_IMPORT_BLOCK = re.compile(r"^import\s*\((.*?)^\)", re.MULTILINE | re.DOTALL)
_QUOTED = re.compile(r'"([^"]+)"')
_MODULE_FILES = ("go.mod", "go.sum", "go.work")
_DECLARATION = re.compile(r"^(?:func|type|var|const)\b", re.MULTILINE)


@dataclass
class GoPackage:
    """A directory of Go files: its import path, the paths its files import, and the package
    clause of its tests (None: it has none)."""

    directory: str
    import_path: str
    imports: set[str] = field(default_factory=set)
    test_clause: tuple[str, bool] | None = None


def imports_of(text: str) -> set[str]:
    """The import paths of a Go file's import declarations."""
    found = set(_IMPORT_ONE.findall(text))
    for block in _IMPORT_BLOCK.findall(text):
        found.update(_QUOTED.findall(block))
    return found


def go_packages(root: Path) -> list[GoPackage]:
    """Every directory with Go files, under the module (go.mod) it belongs to."""
    packages = []
    modules: list[tuple[str, str]] = []  # (directory, module path), outermost first
    for directory, subdirs, files in walk(root):
        subdirs[:] = sorted(d for d in subdirs if not skipped_dir(d))
        relative = os.path.relpath(directory, root)
        if "go.mod" in files and plain_file(root, Path(directory) / "go.mod"):
            text = (Path(directory) / "go.mod").read_text(errors="replace")
            if found := _MODULE.search(text):
                modules.append((relative, found[1]))
        sources = [f for f in sorted(files) if f.endswith(".go") and not skipped_dir(f)]
        if not sources:
            continue
        package = GoPackage(relative, _import_path(relative, modules))
        clauses = []
        for name in sources:
            path = Path(directory) / name
            if not _regular(path):
                continue
            package.imports |= imports_of(_head(path))
            if name.endswith("_test.go") and (clause := package_clause(path)) is not None:
                clauses.append(clause)
        if clauses:
            clauses.sort(key=lambda c: c[1])  # unconstrained first
            package.test_clause = clauses[0]
        packages.append(package)
    return packages


def _head(path: Path) -> str:
    """The start of a Go file up to its first declaration: its imports precede them all."""
    try:
        with path.open("rb") as source:
            text = source.read(HEAD_BYTES).decode(errors="replace")
    except OSError:
        return ""
    found = _DECLARATION.search(text)
    return text[: found.start()] if found else text


def _regular(path: Path) -> bool:
    """A regular file, not a symlink (the walk reaches only real directories of the tree)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _import_path(relative: str, modules: list[tuple[str, str]]) -> str:
    """A directory's import path under the innermost module holding it."""
    for directory, module in reversed(modules):
        if directory == "." or relative == directory or relative.startswith(f"{directory}/"):
            inside = os.path.relpath(relative, directory)
            return module if inside == "." else f"{module}/{inside}"
    return relative


def reached(packages: list[GoPackage], touched: frozenset[str]) -> list[GoPackage]:
    """The packages holding a touched path and those importing them, transitively."""
    by_directory = {p.directory: p for p in packages}
    if any(os.path.basename(path) in _MODULE_FILES for path in touched):
        return packages
    hit: set[str] = set()
    for path in touched:
        directory = os.path.dirname(path) or "."
        while directory not in by_directory and directory not in (".", ""):
            directory = os.path.dirname(directory) or "."  # testdata, embedded files
        if directory in by_directory:
            hit.add(by_directory[directory].import_path)
    grew = True
    while grew:
        grown = {p.import_path for p in packages if p.imports & hit} - hit
        hit |= grown
        grew = bool(grown)
    return [p for p in packages if p.import_path in hit]


def test_packages(root: Path) -> list[tuple[str, str]]:
    """(directory, package clause) of each directory with a `_test.go` file: a clause from
    a file no build constraint limits when there is one."""
    return [(p.directory, p.test_clause[0]) for p in go_packages(root) if p.test_clause is not None]


def test_name() -> str:
    """`Test` and a capital: what `go test` runs."""
    secret = token()
    return f"Test{secret[0].upper()}{secret[1:]}"


def plant(root: Path, touched: frozenset[str], with_failing: bool) -> list[Site]:
    """One site per package with tests the run's diffs reach (module doc)."""
    if not touched:
        return []
    tested = [p for p in reached(go_packages(root), touched) if p.test_clause is not None]
    tested.sort(key=lambda p: (p.directory.count("/"), p.directory))
    sites = []
    for package in tested[:MAX_SITES]:
        assert package.test_clause is not None
        passing = test_name()
        failing = test_name() if with_failing else None
        text = TEST_FILE.format(
            package=package.test_clause[0],
            passing=passing,
            failing=FAILING.format(failing=failing) if failing else "",
        )
        path = os.path.normpath(os.path.join(package.directory, f"{token()}_test.go"))
        sites.append(
            Site(
                label=f"go {package.directory}",
                names=(passing,) + ((failing,) if failing else ()),
                passing=passing,
                failing=failing,
                files={path: text.encode()},
            )
        )
    return sites


# `go test` and its arguments, at the end of a line too
_GO_TEST_LINE = re.compile(r"(?:^|[\s;&|(])(?:go|\$[({]GO[)}])\s+test\b(?P<args>[^;&|\n]*)")
# flags a `go test` line is run apart without: those that stop at a failure, pick the tests
# or change the output, which the invocation sets itself
_APART_DROPPED = frozenset(("-run", "-skip", "-failfast", "-json", "-list", "-bench", "-fuzz"))
# flags with which the packages cannot be named apart: another folder, compile only
_APART_REFUSED = frozenset(("-C", "-c", "-o"))


def _flag_name(word: str) -> str:
    """`-run` however written (`--run=x`): Go's flags take one dash or two."""
    return "-" + word.lstrip("-").split("=", 1)[0]


def apart_command(
    root: Path,
    pipeline: Pipeline,
    line: str,
    files: Sequence[str],
    names: Sequence[str],
    report: str,
) -> str | None:
    """The `go test` line run on the packages of `files`, on the tests `names` only, every
    one to its end (`-failfast=false` after any in GOFLAGS), its JSON events in its log."""
    found = _GO_TEST_LINE.search(line)
    split = shell_words(found["args"]) if found is not None else None
    if found is None or split is None:
        return None
    kept: list[str] = []
    for word in arguments(split[0], GO_VALUE_FLAGS, _flag_name):
        if word.name in _APART_REFUSED:
            return None
        if word.name is not None and word.name not in _APART_DROPPED:
            kept += [word.text, *word.value]
    packages = sorted({posixpath.dirname(f) for f in files})
    run = "^(" + "|".join(sorted(set(names))) + ")$"
    words = [*kept, "-json", "-failfast=false", "-run", run, *packages]
    return f"{line[: found.start('args')].rstrip()} {shlex.join(words)}"
