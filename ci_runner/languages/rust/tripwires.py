"""Rust tripwires: a `#[cfg(test)]` module appended to each test target's crate root.

libtest runs each test target as its own binary, and code that takes over a binary (a
constructor in `.init_array` that prints `test x ... ok` lines and exits 0 before `main`)
takes over only the binaries it is linked into. A tripwire in a separate `tests/` file is
another binary the constructor may never reach, so the module goes into every test target
itself: the library's unit tests (`src/lib.rs`), each binary's (`src/main.rs`,
`src/bin/*.rs`) and each integration test (`tests/*.rs`, `tests/*/main.rs`), as Cargo finds
them (`[lib]`, `[[bin]]`, `[[test]]` with their `path`, `autobins`, `autotests = false`,
`test = false`); a target with `harness = false` has no libtest and is left alone. Every
package under the root counts, workspace members included. Appending changes no line
number, and `cfg(test)` keeps the module out of every build but the tests'. The module is
rustfmt-formatted and clippy-clean.

Every file appended to is compiled again, with what depends on it, so a warm target dir
(an environment image's) would lose its worth if every package got one. They go only where
the run's code can reach and cargo compiles anyway: the packages the run's diffs touch, and
the workspace packages that depend on those, transitively (a constructor is linked only
into binaries that link its crate); a package that has them only as dev-dependencies gets
them in its integration tests alone (its library is not compiled again), at most
MAX_SITES targets.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ci_runner.languages.sites import Site, appended, plain_file, token
from ci_runner.tree_walk import walk

MAX_SITES = 24
SKIPPED_DIRS = frozenset({"target", "vendor", "third_party", "node_modules"})
MAX_MANIFEST_DEPTH = 6

MODULE = """
#[cfg(test)]
mod {module} {{
    #[test]
    fn {passing}() {{}}
{failing}}}
"""
FAILING = """
    #[test]
    fn {failing}() {{
        panic!("this test fails on purpose");
    }}
"""


def manifests(root: Path) -> list[Path]:
    """Every Cargo.toml under the root, outside build output and vendored code."""
    found = []
    for directory, subdirs, files in walk(root):
        depth = Path(directory).relative_to(root).parts
        subdirs[:] = sorted(
            d
            for d in subdirs
            if not d.startswith(".") and d not in SKIPPED_DIRS and len(depth) < MAX_MANIFEST_DEPTH
        )
        if "Cargo.toml" in files:
            found.append(Path(directory) / "Cargo.toml")
    return found


def _table(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _targets(value: Any) -> list[dict[str, Any]]:
    return [t for t in value if isinstance(t, dict)] if isinstance(value, list) else []


def _runs_libtest(target: dict[str, Any]) -> bool:
    return target.get("test", True) is not False and target.get("harness", True) is not False


_NORMAL = ("dependencies", "build-dependencies")
_DEV = ("dev-dependencies",)


@dataclass(frozen=True)
class Package:
    """A package of the tree: its directory, name, the names it depends on (normally, and
    for its tests only), its libtest targets' roots and, of those, its integration tests'."""

    directory: Path
    name: str
    depends_on: frozenset[str]
    dev_depends_on: frozenset[str]
    roots: tuple[Path, ...]
    integration_tests: tuple[Path, ...]


def _dependency_names(data: dict[str, Any], kinds: tuple[str, ...]) -> frozenset[str]:
    tables = [_table(data.get(kind)) for kind in kinds]
    for target in _table(data.get("target")).values():
        tables += [_table(_table(target).get(kind)) for kind in kinds]
    names = set()
    for table in tables:
        for key, spec in table.items():
            names.add(str(_table(spec).get("package", key)))
    return frozenset(names)


def read_package(manifest: Path) -> Package | None:
    """A package and the crate roots of its targets that `cargo test` runs with libtest;
    None for a virtual manifest (its members have their own) or one that cannot be read."""
    try:
        data = tomllib.loads(manifest.read_text(errors="replace"))
    except (tomllib.TOMLDecodeError, OSError):
        return None
    package = _table(data.get("package"))
    if not package:
        return None
    base = manifest.parent
    roots: list[Path] = []
    lib = _table(data.get("lib"))
    if _runs_libtest(lib):
        roots.append(base / str(lib.get("path", "src/lib.rs")))
    roots += _declared_or_found(
        _targets(data.get("bin")),
        package.get("autobins", True) is not False,
        [base / "src" / "main.rs", *_auto(base / "src" / "bin")],
        base,
        "src/bin",
    )
    tests = _declared_or_found(
        _targets(data.get("test")),
        package.get("autotests", True) is not False,
        _auto(base / "tests"),
        base,
        "tests",
    )
    kept = [r for r in dict.fromkeys([*roots, *tests]) if plain_file(base, r)]
    return Package(
        directory=base,
        name=str(package.get("name", base.name)),
        depends_on=_dependency_names(data, _NORMAL),
        dev_depends_on=_dependency_names(data, _DEV),
        roots=tuple(kept),
        integration_tests=tuple(r for r in kept if r in tests),
    )


def crate_roots(manifest: Path) -> list[Path]:
    """The crate roots of a package's targets that `cargo test` runs with libtest."""
    package = read_package(manifest)
    return list(package.roots) if package else []


def reached(packages: Iterable[Package], touched: Iterable[Path]) -> list[Path]:
    """The crate roots the run's code can reach and cargo compiles anyway: every target of
    the packages holding a touched path and of those that depend on them (transitively),
    and the integration tests of those that have them as dev-dependencies only."""
    packages = sorted(packages, key=lambda p: (len(p.directory.parts), str(p.directory)))
    owners = {_owner(packages, path) for path in touched} - {None}
    full = {p.name for p in packages if p.directory in owners}
    grew = True
    while grew:
        grown = {p.name for p in packages if p.depends_on & full} - full
        full |= grown
        grew = bool(grown)
    roots: list[Path] = []
    for package in packages:
        if package.name in full:
            roots += package.roots
        elif package.dev_depends_on & full:
            roots += package.integration_tests
    return roots


def _owner(packages: list[Package], path: Path) -> Path | None:
    """The directory of the innermost package holding `path`."""
    holding = [p.directory for p in packages if path.is_relative_to(p.directory)]
    return max(holding, key=lambda d: len(d.parts)) if holding else None


def _auto(directory: Path) -> list[Path]:
    """Cargo's target discovery in a folder: `*.rs` and `*/main.rs`."""
    if not directory.is_dir():
        return []
    found = []
    for entry in sorted(directory.iterdir()):
        if entry.is_file() and entry.suffix == ".rs":
            found.append(entry)
        elif entry.is_dir() and (entry / "main.rs").is_file():
            found.append(entry / "main.rs")
    return found


def _declared_or_found(
    declared: list[dict[str, Any]], auto: bool, found: list[Path], base: Path, folder: str
) -> list[Path]:
    """Declared targets (by `path`, or `folder/<name>.rs`) that run libtest, and the found
    ones unless discovery is off; a found file a declaration turns off is left out."""
    roots: list[Path] = []
    off: set[Path] = set()
    for target in declared:
        name = str(target.get("name", ""))
        path = base / str(target.get("path", f"{folder}/{name}.rs"))
        if _runs_libtest(target):
            roots.append(path)
        else:
            off.add(path)
    if auto:
        roots += [p for p in found if p not in off]
    return roots


def plant(root: Path, touched: frozenset[str], with_failing: bool) -> list[Site]:
    """One site per test target the run's diffs reach (module doc)."""
    if not touched:
        return []
    packages = [p for m in manifests(root) if (p := read_package(m)) is not None]
    sites = []
    for crate_root in reached(packages, (root / p for p in touched))[:MAX_SITES]:
        try:
            source = crate_root.read_bytes()
        except OSError:
            continue
        module, passing = token(), token()
        failing = token() if with_failing else None
        block = MODULE.format(
            module=module,
            passing=passing,
            failing=FAILING.format(failing=failing) if failing else "",
        )
        relative = os.path.relpath(crate_root, root)
        sites.append(
            Site(
                label=f"rust {relative}",
                names=(module,),
                passing=passing,
                failing=failing,
                files={relative: appended(source, block)},
            )
        )
    return sites
