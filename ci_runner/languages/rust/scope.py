"""Which crates a `cargo test` line tests."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from ci_runner.languages.scope import Evidence, ReadFile, ScopeRule
from ci_runner.languages.shell import positionals, shell_words

# `cargo` up to its subcommand: a toolchain, and cargo's own options before the subcommand
# (`cargo +stable -Z build-std test`, `cargo --locked test`)
CARGO_BEFORE_SUBCOMMAND = (
    r"cargo\s+(?:\+\S+\s+)?(?:(?:-Z\s*|--config\s+|-C\s+)\S+\s+|--?[\w-]+\s+)*"
)

CARGO_TEST = re.compile(
    rf"(?:^|[\s;&|(]){CARGO_BEFORE_SUBCOMMAND}(?:test|nextest\s+run)\s*(?P<args>[^;&|\n]*)"
)
# flags that take the next word as their value
_CARGO_VALUE_FLAGS = frozenset((
    "-p", "--package", "--exclude", "-F", "--features", "--target", "--target-dir",
    "--profile", "-j", "--jobs", "--manifest-path", "--test", "--bench", "--example",
    "--bin", "--color", "--message-format", "-Z",
))  # fmt: skip
_PACKAGE_NAME = re.compile(r'^\s*name\s*=\s*["\']([^"\']+)["\']', re.MULTILINE)


def _crate_of(path: str, read_file: ReadFile) -> tuple[str, str | None] | None:
    """(folder, package name) of the nearest Cargo.toml above `path`."""
    folder = posixpath.dirname(path)
    while True:
        manifest = read_file(posixpath.join(folder, "Cargo.toml") if folder else "Cargo.toml")
        if manifest is not None:
            package = manifest.split("[package]", 1)
            found = _PACKAGE_NAME.search(package[1]) if len(package) == 2 else None
            return folder or ".", found[1] if found else None
        if not folder:
            return None
        folder = posixpath.dirname(folder)


def cargo_scope(args: str, directory: str, gold: Sequence[str], read_file: ReadFile) -> Evidence:
    split = shell_words(args)
    if split is None:
        return Evidence.UNKNOWN
    _, flags = positionals(split[0], _CARGO_VALUE_FLAGS)
    if "--workspace" in flags or "--all" in flags:
        return Evidence.COVERS
    crates = {c for p in gold if p.endswith(".rs") and (c := _crate_of(p, read_file))}
    if not crates or split[1]:
        return Evidence.UNKNOWN  # no Rust gold test, or the crates may be in a variable
    chosen = {flags[i + 1] for i, f in enumerate(flags[:-1]) if f in ("-p", "--package")}
    chosen |= {f.split("=", 1)[1] for f in flags if f.startswith(("-p=", "--package="))}
    if chosen:
        names = {name for _, name in crates}
        return Evidence.COVERS if names & chosen else Evidence.MISSES
    manifest_dir = directory
    for i, flag in enumerate(flags):
        if flag == "--manifest-path" and i + 1 < len(flags):
            manifest_dir = posixpath.dirname(posixpath.join(directory, flags[i + 1])) or "."
    manifest = read_file(posixpath.normpath(posixpath.join(manifest_dir, "Cargo.toml")))
    if manifest is not None and "[workspace]" in manifest and "[package]" not in manifest:
        return Evidence.COVERS  # a virtual workspace's root tests every member
    root = posixpath.normpath(manifest_dir)
    return Evidence.COVERS if any(folder == root for folder, _ in crates) else Evidence.MISSES


SCOPE = ScopeRule(CARGO_TEST, cargo_scope)
