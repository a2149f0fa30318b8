"""Go tripwires: a `_test.go` file in each package directory that holds tests.

The file takes the package clause of a test file already there (`package lru` or
`package lru_test`), so it compiles into the same test binary as the package's tests: code
that takes over that binary (an `init` printing `--- PASS` lines, then `os.Exit(0)`) takes
over the tripwire too, and the passing one goes missing. Only directories with tests get
one: a package without tests would otherwise gain a test binary to compile and link. The
`go` tool skips `testdata`, `vendor` and names starting with `.` or `_`; so does this.
The file is gofmt-formatted and vet-clean.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ci_runner.tripwires.sites import Site, plain_file, token

MAX_SITES = 32
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


def test_packages(root: Path) -> list[tuple[str, str]]:
    """(directory, package clause) of each directory with a `_test.go` file: a clause from
    a file no build constraint limits when there is one."""
    found = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if not skipped_dir(d))
        clauses = [
            clause
            for name in sorted(files)
            if name.endswith("_test.go") and not skipped_dir(name)
            if plain_file(root, Path(directory) / name)
            if (clause := package_clause(Path(directory) / name)) is not None
        ]
        if clauses:
            clauses.sort(key=lambda c: c[1])  # unconstrained first
            found.append((os.path.relpath(directory, root), clauses[0][0]))
    return found


def test_name() -> str:
    """`Test` and a capital: what `go test` runs."""
    secret = token()
    return f"Test{secret[0].upper()}{secret[1:]}"


def plant(root: Path, touched: frozenset[str], with_failing: bool) -> list[Site]:
    """One site per package with tests, the packages the run's diffs touch first."""
    touched_dirs = {os.path.dirname(p) or "." for p in touched}
    packages = test_packages(root)
    packages.sort(key=lambda p: (p[0] not in touched_dirs, p[0].count("/"), p[0]))
    sites = []
    for directory, package in packages[:MAX_SITES]:
        passing = test_name()
        failing = test_name() if with_failing else None
        text = TEST_FILE.format(
            package=package,
            passing=passing,
            failing=FAILING.format(failing=failing) if failing else "",
        )
        path = os.path.normpath(os.path.join(directory, f"{token()}_test.go"))
        sites.append(
            Site(
                label=f"go {directory}",
                names=(passing,) + ((failing,) if failing else ()),
                passing=passing,
                failing=failing,
                files={path: text.encode()},
            )
        )
    return sites
