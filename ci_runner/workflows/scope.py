"""Whether a leg's test commands run the gold tests: the scope of each runner line (the
packages `go test` is given, the paths `pytest` is given, the crates `cargo test` selects)
against the files the gold test patch touches.

Pure rules over the runner lines `commands.runner_lines` finds (make/just recipes and called
scripts followed); a crate's name is read through `read_file`. A runner whose scope cannot be
read (tox, nox, ctest, a variable) says nothing either way.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import NamedTuple

from ci_runner.workflows.commands import CARGO_BEFORE_SUBCOMMAND, ReadFile, RunnerLine


class Evidence(IntEnum):
    """Smaller is better: the order legs are ranked in."""

    COVERS = 0  # a runner line's scope holds a gold test
    UNKNOWN = 1  # no runner line's scope could be read, or no gold test is of its language
    MISSES = 2  # every runner line's scope leaves every gold test out


@dataclass(frozen=True)
class Scope:
    evidence: Evidence
    why: str


_GO_TEST = re.compile(r"(?:^|[\s;&|(])(?:go|\$[({]GO[)}])\s+test\s+(?P<args>[^;&|\n]*)")
PYTEST_LINE = re.compile(
    r"(?:^|[\s;&|(/])(?:py\.?test|python\d*(?:\.\d+)?\s+-m\s+pytest)\s*(?P<args>[^;&|\n]*)"
)
_CARGO_TEST = re.compile(
    rf"(?:^|[\s;&|(]){CARGO_BEFORE_SUBCOMMAND}(?:test|nextest\s+run)\s*(?P<args>[^;&|\n]*)"
)
# flags that take the next word as their value
GO_VALUE_FLAGS = frozenset((
    "-run", "-skip", "-tags", "-timeout", "-count", "-p", "-parallel", "-coverprofile",
    "-covermode", "-coverpkg", "-bench", "-benchtime", "-cpu", "-exec", "-o", "-ldflags",
    "-gcflags", "-asmflags", "-mod", "-modfile", "-shuffle", "-vet", "-C", "-fuzz",
    "-fuzztime", "-outputdir", "-blockprofile", "-cpuprofile", "-memprofile",
    "-mutexprofile", "-trace", "-overlay", "-pgo", "-toolexec", "-installsuffix",
))  # fmt: skip
PYTEST_VALUE_FLAGS = frozenset((
    "-k", "-m", "-n", "-p", "-c", "-o", "-W", "-r", "--rootdir", "--cov", "--cov-report",
    "--cov-config", "--junitxml", "--junit-xml", "--maxfail", "--deselect", "--ignore",
    "--ignore-glob", "--durations", "--tb", "--log-level", "--basetemp", "--confcutdir",
    "--dist", "--numprocesses", "--timeout", "--reruns", "--import-mode", "--capture",
    "--override-ini", "--color", "--randomly-seed", "--benchmark-json", "--html",
))  # fmt: skip
_CARGO_VALUE_FLAGS = frozenset((
    "-p", "--package", "--exclude", "-F", "--features", "--target", "--target-dir",
    "--profile", "-j", "--jobs", "--manifest-path", "--test", "--bench", "--example",
    "--bin", "--color", "--message-format", "-Z",
))  # fmt: skip
_PACKAGE_NAME = re.compile(r'^\s*name\s*=\s*["\']([^"\']+)["\']', re.MULTILINE)


_VARIABLE = re.compile(r"\$(?:\([^)]*\)|\{[^}]*\}|\w+)")


def shell_words(args: str) -> tuple[list[str], bool] | None:
    """The arguments as the shell splits them, without the variables and substitutions
    (`$(TESTFLAGS)`, `${PKGS}`), and whether there were any; None where they cannot be split."""
    if "`" in args:
        return None
    plain, variables = _VARIABLE.subn(" ", args)
    try:
        return shlex.split(plain, comments=True), variables > 0
    except ValueError:
        return None


class Word(NamedTuple):
    """One word of an argument list: an option (`name`: how the runner spells it, `value`:
    the next word when that is its value) or a positional word (`name` None)."""

    name: str | None
    text: str
    value: tuple[str, ...] = ()


def _option_name(word: str) -> str:
    return word.split("=", 1)[0]


def arguments(
    words: list[str],
    value_flags: frozenset[str],
    name_of: Callable[[str], str] = _option_name,
) -> list[Word]:
    """The argument list read word by word, an option's value with it (`--`, which ends
    the options, left out)."""
    read: list[Word] = []
    at = 0
    while at < len(words):
        word = words[at]
        at += 1
        if word == "--":
            continue
        if not word.startswith("-"):
            read.append(Word(None, word))
            continue
        name = name_of(word)
        takes_value = "=" not in word and name in value_flags and at < len(words)
        read.append(Word(name, word, (words[at],) if takes_value else ()))
        at += 1 if takes_value else 0
    return read


def _positionals(words: list[str], value_flags: frozenset[str]) -> tuple[list[str], list[str]]:
    """(positional words, flags with their values) of an argument list."""
    read = arguments(words, value_flags, name_of=lambda word: word)
    positional = [w.text for w in read if w.name is None]
    return positional, [part for w in read if w.name is not None for part in (w.text, *w.value)]


def _under(path: str, folder: str) -> bool:
    folder = posixpath.normpath(folder)
    return folder in ("", ".") or path == folder or path.startswith(f"{folder}/")


def _go_scope(args: str, directory: str, gold: Sequence[str]) -> Evidence:
    split = shell_words(args)
    packages = {posixpath.dirname(p) or "." for p in gold if p.endswith(".go")}
    if split is None or not packages:
        return Evidence.UNKNOWN
    patterns, _ = _positionals(split[0], GO_VALUE_FLAGS)
    if not patterns and split[1]:
        return Evidence.UNKNOWN  # the packages may be in a variable
    for pattern in patterns or ["."]:
        if not pattern.startswith("."):
            return Evidence.UNKNOWN  # an import path: its module prefix is not read here
        recursive = pattern.endswith("/...") or pattern == "..."
        base = posixpath.normpath(posixpath.join(directory, pattern.removesuffix("...")))
        for package in packages:
            if (recursive and _under(package, base)) or posixpath.normpath(package) == base:
                return Evidence.COVERS
    return Evidence.MISSES


def _pytest_scope(args: str, directory: str, gold: Sequence[str]) -> Evidence:
    split = shell_words(args)
    tests = [p for p in gold if p.endswith(".py")]
    if split is None or not tests:
        return Evidence.UNKNOWN
    paths, _ = _positionals(split[0], PYTEST_VALUE_FLAGS)
    selected = [p.split("::")[0] for p in paths]
    if not selected and split[1]:
        return Evidence.UNKNOWN  # the paths may be in a variable
    if not selected:
        return Evidence.COVERS if any(_under(t, directory) for t in tests) else Evidence.MISSES
    for path in selected:
        where = posixpath.normpath(posixpath.join(directory, path))
        if any(_under(t, where) for t in tests):
            return Evidence.COVERS
    return Evidence.MISSES


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


def _cargo_scope(args: str, directory: str, gold: Sequence[str], read_file: ReadFile) -> Evidence:
    split = shell_words(args)
    if split is None:
        return Evidence.UNKNOWN
    _, flags = _positionals(split[0], _CARGO_VALUE_FLAGS)
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


def gold_scope(lines: Sequence[RunnerLine], gold: Sequence[str], read_file: ReadFile) -> Scope:
    """Whether the runner lines run a gold test (`gold`: the paths the gold tests touch)."""
    if not gold or not lines:
        return Scope(Evidence.UNKNOWN, "")
    found: list[tuple[Evidence, str]] = []
    for runner in lines:
        for pattern, scope in ((_GO_TEST, "go"), (PYTEST_LINE, "pytest"), (_CARGO_TEST, "cargo")):
            for match in pattern.finditer(runner.line):
                args = match["args"]
                if scope == "go":
                    evidence = _go_scope(args, runner.directory, gold)
                elif scope == "pytest":
                    evidence = _pytest_scope(args, runner.directory, gold)
                else:
                    evidence = _cargo_scope(args, runner.directory, gold, read_file)
                found.append((evidence, match.group(0).strip()[:80]))
    known = [(e, text) for e, text in found if e is not Evidence.UNKNOWN]
    if covering := [text for e, text in known if e is Evidence.COVERS]:
        return Scope(Evidence.COVERS, f"its tests reach the gold tests ({covering[0]})")
    if known and len(known) == len(found):
        return Scope(Evidence.MISSES, f"its tests leave the gold tests out ({known[0][1]})")
    return Scope(Evidence.UNKNOWN, "")
