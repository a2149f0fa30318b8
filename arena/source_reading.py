"""Reviewer tests that read the project's source files as text, flagged in the evidence.

A test that hashes or greps a source file recognises a patch's bytes, not its behaviour; the
neutral-change run (N(P')) keeps such a test from catching, and this flag tells the reader
why a failing test did not count.
"""

from __future__ import annotations

import re

from arena.players.hunks import split_diff

_SOURCE_EXT = r"\.(?:py|pyi|go|rs|c|cc|cpp|cxx|h|hh|hpp|hxx|js|ts|tsx|jsx|java)\b"
# calls that read a file's bytes, per language
_READS = re.compile(
    r"\bopen\s*\(|\.read_(?:text|bytes)\s*\(|\bio\.open\s*\(|\bcodecs\.open\s*\("
    r"|\b(?:os|ioutil)\.(?:ReadFile|Open)\s*\(|\bfs::read(?:_to_string)?\s*\(|File::open\s*\("
    r"|\bstd::[io]?fstream\b|\bifstream\b|\bfopen\s*\("
)
# reads that are about the source by construction
_INTROSPECTION = re.compile(
    r"\binspect\.getsource(?:lines|file)?\s*\(|\binclude_(?:str|bytes)!\s*\("
    r"|\bhashlib\.\w+\s*\(\s*(?:open|Path|pathlib)|\b__file__\b.*\.read|runtime\.Caller\s*\("
)
_PATHLIKE = re.compile(r"[\"'`][^\"'`\n]*" + _SOURCE_EXT + r"[\"'`]")


def source_reads(test_diff: str) -> tuple[str, ...]:
    """The lines T adds that read the project's source files as text (`path: line`)."""
    flagged: list[str] = []
    for file in split_diff(test_diff):
        path = next(
            (line[6:].strip() for line in file.header if line.startswith("+++ b/")),
            next((line[4:].strip() for line in file.header if line.startswith("+++ ")), "?"),
        )
        for hunk in file.hunks:
            for line in hunk.lines:
                if not line.startswith("+"):
                    continue
                code = line[1:].strip()
                if _INTROSPECTION.search(code) or (_READS.search(code) and _PATHLIKE.search(code)):
                    flagged.append(f"{path}: {code[:160]}")
    return tuple(flagged)
