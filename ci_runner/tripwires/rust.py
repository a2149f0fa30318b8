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

Each file appended to is rebuilt, with what depends on it: the packages the run's diffs
touch come first (they are rebuilt anyway), then the rest, up to MAX_SITES targets.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from ci_runner.tripwires.sites import Site, plain_file, token

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
    for directory, subdirs, files in os.walk(root):
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


def crate_roots(manifest: Path) -> list[Path]:
    """The crate roots of a package's targets that `cargo test` runs with libtest."""
    try:
        data = tomllib.loads(manifest.read_text(errors="replace"))
    except (tomllib.TOMLDecodeError, OSError):
        return []
    package = _table(data.get("package"))
    if not package:
        return []  # a virtual manifest: its members have their own
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
    roots += _declared_or_found(
        _targets(data.get("test")),
        package.get("autotests", True) is not False,
        _auto(base / "tests"),
        base,
        "tests",
    )
    return [r for r in dict.fromkeys(roots) if plain_file(base, r)]


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
    """One site per test target, the packages the run's diffs touch first."""
    packages = [(m.parent, crate_roots(m)) for m in manifests(root)]

    def untouched(package: Path) -> bool:
        relative = os.path.relpath(package, root)
        prefix = "" if relative == "." else f"{relative}/"
        return not any(p.startswith(prefix) for p in touched)

    packages.sort(key=lambda p: (untouched(p[0]), len(p[0].parts), str(p[0])))
    sites = []
    for crate_root in [r for _, roots in packages for r in roots][:MAX_SITES]:
        try:
            source = crate_root.read_bytes()
        except OSError:
            continue
        module, passing = token(), token()
        failing = token() if with_failing else None
        appended = MODULE.format(
            module=module,
            passing=passing,
            failing=FAILING.format(failing=failing) if failing else "",
        )
        lead = b"" if source.endswith(b"\n") or not source else b"\n"
        relative = os.path.relpath(crate_root, root)
        sites.append(
            Site(
                label=f"rust {relative}",
                names=(module,),
                passing=passing,
                failing=failing,
                files={relative: source + lead + appended.encode()},
            )
        )
    return sites
