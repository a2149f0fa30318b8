"""Reviewer tests that read the program instead of running it: excluded from catching.

A test that greps or hashes a source file, inspects a function's code object or bytecode,
embeds a source file or reads a file's metadata recognises the shape of a patch, not its
behaviour: a reviewer who saw P could write one that fails on any P not shaped like gold,
and neither the re-run nor N(P') would stop it. Such a test is never one of T's catching
tests (swing-protocol.md); the round's evidence names it and the line that reads.

A reading line inside one of T's tests excludes that test; one anywhere else in the file (a
helper, a fixture, module level) excludes every test of its file, since any may call it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from arena.hunks import split_diff
from arena.languages.cases import ReadFile, TestCase, innermost
from arena.ownership.changes import file_changes
from arena.ownership.owners import file_cases

_SOURCE_EXT = r"\.(?:py|pyi|go|rs|c|cc|cpp|cxx|h|hh|hpp|hxx|js|ts|tsx|jsx|java)\b"
# calls that read a file's bytes, per language
_READS = re.compile(
    r"\bopen\s*\(|\.read_(?:text|bytes)\s*\(|\bio\.open\s*\(|\bcodecs\.open\s*\("
    r"|\b(?:os|ioutil)\.(?:ReadFile|Open)\s*\(|\bfs::read(?:_to_string)?\s*\(|File::open\s*\("
    r"|\bstd::[io]?fstream\b|\bifstream\b|\bfopen\s*\("
)
# reads that are about the program by construction: its source, code objects, bytecode,
# embedded files, the files' metadata
_INTROSPECTION = re.compile(
    r"\binspect\.(?:getsource(?:lines|file)?|getfile|getcomments|getclosurevars)\s*\("
    r"|\.__code__\b|\.(?:co_names|co_consts|co_code|co_varnames|co_lnotab|co_lines)\b"
    r"|\bdis\.(?:dis|get_instructions|Bytecode|code_info|show_code)\s*\("
    r"|\bast\.parse\s*\(\s*(?:inspect|open|pathlib|Path)"
    r"|\blinecache\.|\btokenize\.open\s*\("
    r"|\binclude_(?:str|bytes)!\s*\(|//\s*go:embed\b|\bgo/(?:parser|ast)\b"
    r"|\bhashlib\.\w+\s*\(\s*(?:open|Path|pathlib)|runtime\.Caller\s*\("
)
# a file's metadata: about the program when the file is a source (or the module's own)
_METADATA = re.compile(
    r"\bos\.(?:stat|lstat)\s*\(|\bos\.path\.get(?:mtime|ctime|atime|size)\s*\("
    r"|\bos\.Stat\s*\(|\bfs::metadata\s*\(|\bstd::filesystem::(?:file_size|last_write_time)\b"
    r"|\.stat\(\s*\)"
)
_PATHLIKE = re.compile(r"[\"'`][^\"'`\n]*" + _SOURCE_EXT + r"[\"'`]")
# a module's own file (`slug.__file__`), not the test's (`__file__`: fixtures beside it)
_OWN_FILE = re.compile(r"\w\.__file__\b|\binspect\.getfile\s*\(")


def reads_program(code: str) -> bool:
    """Whether a line of test code reads the program rather than runs it."""
    if _INTROSPECTION.search(code):
        return True
    names_source = bool(_PATHLIKE.search(code) or _OWN_FILE.search(code))
    return names_source and bool(_READS.search(code) or _METADATA.search(code))


def source_reads(test_diff: str) -> tuple[str, ...]:
    """The lines T adds that read the program (`path: line`)."""
    flagged: list[str] = []
    for file in split_diff(test_diff):
        path = next(
            (line[6:].strip() for line in file.header if line.startswith("+++ b/")),
            next((line[4:].strip() for line in file.header if line.startswith("+++ ")), "?"),
        )
        for hunk in file.hunks:
            for line in hunk.lines:
                if line.startswith("+") and reads_program(line[1:].strip()):
                    flagged.append(f"{path}: {line[1:].strip()[:160]}")
    return tuple(flagged)


def program_reading_tests(
    test_diff: str, read_base: ReadFile, test_ids: Iterable[str]
) -> dict[str, str]:
    """Of `test_ids` (T's tests), those that read the program, each with the line that does
    (`path: line`). `read_base` reads files at the base commit T was written against."""
    ids = set(test_ids)
    found: dict[str, str] = {}
    for change in file_changes(test_diff, read_base):
        if change.new_path is None:
            continue
        lines = change.new_text.splitlines()
        cases: list[TestCase] | None = None
        for number in sorted(change.added):
            code = lines[number - 1].strip() if number <= len(lines) else ""
            if not reads_program(code):
                continue
            if cases is None:
                cases = file_cases(change.new_path, change.new_text, read_base)
            # inside one of T's tests: that test; in anything else (a helper function, a
            # fixture, module level) that T added: every test of the file may call it
            around = innermost(cases, number)
            owner = around is not None and any(around.owns(test_id) for test_id in ids)
            reading = [around] if around is not None and owner else cases
            why = f"{change.new_path}: {code[:160]}"
            for test_id in ids - set(found):
                if any(case.owns(test_id) for case in reading):
                    found[test_id] = why
    return found
