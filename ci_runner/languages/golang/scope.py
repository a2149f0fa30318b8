"""Which packages a `go test` line tests."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from ci_runner.languages.scope import Evidence, ReadFile, ScopeRule
from ci_runner.languages.shell import positionals, shell_words, under

GO_TEST = re.compile(r"(?:^|[\s;&|(])(?:go|\$[({]GO[)}])\s+test\s+(?P<args>[^;&|\n]*)")
# flags that take the next word as their value
GO_VALUE_FLAGS = frozenset((
    "-run", "-skip", "-tags", "-timeout", "-count", "-p", "-parallel", "-coverprofile",
    "-covermode", "-coverpkg", "-bench", "-benchtime", "-cpu", "-exec", "-o", "-ldflags",
    "-gcflags", "-asmflags", "-mod", "-modfile", "-shuffle", "-vet", "-C", "-fuzz",
    "-fuzztime", "-outputdir", "-blockprofile", "-cpuprofile", "-memprofile",
    "-mutexprofile", "-trace", "-overlay", "-pgo", "-toolexec", "-installsuffix",
))  # fmt: skip


def go_scope(args: str, directory: str, gold: Sequence[str], read_file: ReadFile) -> Evidence:
    split = shell_words(args)
    packages = {posixpath.dirname(p) or "." for p in gold if p.endswith(".go")}
    if split is None or not packages:
        return Evidence.UNKNOWN
    patterns, _ = positionals(split[0], GO_VALUE_FLAGS)
    if not patterns and split[1]:
        return Evidence.UNKNOWN  # the packages may be in a variable
    for pattern in patterns or ["."]:
        if not pattern.startswith("."):
            return Evidence.UNKNOWN  # an import path: its module prefix is not read here
        recursive = pattern.endswith("/...") or pattern == "..."
        base = posixpath.normpath(posixpath.join(directory, pattern.removesuffix("...")))
        for package in packages:
            if (recursive and under(package, base)) or posixpath.normpath(package) == base:
                return Evidence.COVERS
    return Evidence.MISSES


SCOPE = ScopeRule(GO_TEST, go_scope)
