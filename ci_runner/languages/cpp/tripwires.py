"""C and C++ tripwires: the project's own test binary, run under names only Arena's source
answers, registered with ctest beside the project's tests.

A ctest test is a command, and its verdict the command's exit: code under test that makes
every test binary exit 0 (`atexit` with `_exit(0)` in a header, a constructor that exits
before `main`) passes every test. So the tripwire is not a binary of its own (code that
forges a binary takes over only the binaries it is in): a small source goes into the test
executable of the first `add_test` whose command names a target of the project, and two
tests run that executable, one under the passing name and one under the failing one (else
the executable of a framework's discovery, `gtest_discover_tests(unit)`, or of a `COMMAND`
given to a project's wrapper of `add_test`). The
source's constructor reads the process's first argument and ends the process there, with 0
or 1, before the project's `main` sees it; `exit` runs the handlers registered before it,
the forger's among them, so a forged exit shows as the must-fail tripwire passing.

The block goes at the end of the CMake file that holds that `add_test`, so ctest finds the
tripwires wherever it finds the project's tests (`enable_testing()` is per directory); it
writes its source into the build folder when CMake configures (never into the sources,
where a project's `file(GLOB ...)` could make it a target of its own), as C where C is
enabled, else as C++, and adds it only to a target that is an executable the project builds
(not imported, not an alias). The files go in only when the
run has a diff: the build then reconfigures, compiles the one source and links the one
executable again.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ci_runner.languages.sites import Site, appended, plain_file, token
from ci_runner.tree_walk import walk

MAX_FILES = 256  # CMake files read for their add_test calls
MAX_FILE_BYTES = 256 * 1024
SKIPPED_DIRS = frozenset({".git", "build", "_deps", "third_party", "vendor", "node_modules"})

_ADD_TEST = re.compile(r"\badd_test\s*\(([^()]*)\)", re.IGNORECASE)
_ADD_EXECUTABLE = re.compile(r"\badd_executable\s*\(\s*([A-Za-z_][\w.+-]*)[\s)]", re.IGNORECASE)
_TARGET_FILE = re.compile(r"\$<TARGET_FILE:([A-Za-z_][\w.+-]*)>")
_TARGET = re.compile(r"[A-Za-z_][\w.+-]*\Z")
# a framework's registration of a whole executable's cases
_DISCOVER = re.compile(
    r"\b(?:(?:gtest|doctest|catch)_discover_tests\s*\(|gtest_add_tests\s*\([^()]*?\bTARGET)"
    r"\s*([A-Za-z_][\w.+-]*)",
    re.IGNORECASE,
)
# a command named in a file that registers tests through a wrapper of add_test
# (`set(args COMMAND $<TARGET_FILE:all_features>)` then `doctest_add_test(NAME x ${args})`)
_COMMAND = re.compile(r"\bCOMMAND\s+(?:\$<TARGET_FILE:([\w.+-]+)>|([A-Za-z_][\w.+-]*))")
_COMMENT = re.compile(r"#[^\n]*")

SOURCE = """/* Arena's tripwire (ci_runner/languages/cpp): ends the process before main when its
   first argument is one of the tripwire's names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((constructor)) static void {module}(void) {{
    char buffer[4096];
    FILE *file = fopen("/proc/self/cmdline", "rb");
    size_t size;
    const char *argument;
    if (!file) {{
        return;
    }}
    size = fread(buffer, 1, sizeof buffer - 1, file);
    fclose(file);
    buffer[size] = '\\0';
    argument = buffer + strlen(buffer) + 1;
    if (argument >= buffer + size) {{
        return;
    }}
    if (strcmp(argument, "{passing}") == 0) {{
        exit(0);
    }}
    if (strcmp(argument, "{failing}") == 0) {{
        fputs("this test fails on purpose\\n", stderr);
        exit(1);
    }}
}}
"""
BLOCK = """
# Arena's tripwire tests (ci_runner/languages/cpp/tripwires.py)
get_property(arena_{module}_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
list(FIND arena_{module}_languages C arena_{module}_c)
list(FIND arena_{module}_languages CXX arena_{module}_cxx)
set(arena_{module}_source "")
if(arena_{module}_c GREATER -1)
  set(arena_{module}_source "${{CMAKE_CURRENT_BINARY_DIR}}/{module}.c")
elseif(arena_{module}_cxx GREATER -1)
  set(arena_{module}_source "${{CMAKE_CURRENT_BINARY_DIR}}/{module}.cpp")
endif()
if(TARGET {target} AND arena_{module}_source)
  file(WRITE "${{arena_{module}_source}}" [==[
{source}]==])
  get_target_property(arena_{module}_type {target} TYPE)
  get_target_property(arena_{module}_imported {target} IMPORTED)
  get_target_property(arena_{module}_alias {target} ALIASED_TARGET)
  if(arena_{module}_type STREQUAL "EXECUTABLE" AND NOT arena_{module}_imported
     AND NOT arena_{module}_alias)
    target_sources({target} PRIVATE "${{arena_{module}_source}}")
    add_test(NAME {module}_{passing} COMMAND {target} {passing})
{failing_test}  endif()
endif()
"""
FAILING_TEST = "    add_test(NAME {module}_{failing} COMMAND {target} {failing})\n"


def _cmake_files(root: Path) -> list[Path]:
    found: list[Path] = []
    for directory, subdirs, files in walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in SKIPPED_DIRS and not d.startswith("."))
        for name in sorted(files):
            if name == "CMakeLists.txt" or name.endswith(".cmake"):
                found.append(Path(directory) / name)
                if len(found) >= MAX_FILES:
                    return found
    return found


def target_of_test(arguments: str) -> str | None:
    """The target an `add_test(...)` runs, when its command names one plainly."""
    words = arguments.split()
    if not words:
        return None
    if words[0].upper() == "NAME":
        upper = [w.upper() for w in words]
        if "COMMAND" not in upper or upper.index("COMMAND") + 1 >= len(words):
            return None
        command = words[upper.index("COMMAND") + 1]
    elif len(words) >= 2:
        command = words[1]
    else:
        return None
    command = command.strip("\"'")
    if (wrapped := _TARGET_FILE.fullmatch(command)) is not None:
        return wrapped[1]
    return command if _TARGET.match(command) else None


def _first_test(root: Path) -> tuple[Path, str] | None:
    """The CMake file of the project's first test registration that runs an executable the
    project declares (`add_executable`), and the executable's target: an `add_test`, else a
    framework's discovery, else a command given to a wrapper of `add_test`."""
    texts: list[tuple[Path, str]] = []
    for path in _cmake_files(root):
        if not plain_file(root, path):
            continue
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                continue
            texts.append((path, _COMMENT.sub("", path.read_text(errors="replace"))))
        except OSError:
            continue
    executables = {name for _, text in texts for name in _ADD_EXECUTABLE.findall(text)}
    lists = [(path, text) for path, text in texts if path.name == "CMakeLists.txt"]
    for path, text in lists:  # add_test(NAME x COMMAND target ...)
        for found in _ADD_TEST.finditer(text):
            target = target_of_test(found[1])
            if target is not None and target in executables:
                return path, target
    for path, text in lists:  # gtest_discover_tests(target), its kin
        for target in _DISCOVER.findall(text):
            if target in executables:
                return path, target
    for path, text in lists:  # a wrapper of add_test given `COMMAND target`
        if "add_test" not in text.lower():
            continue
        for wrapped, plain in _COMMAND.findall(text):
            if (wrapped or plain) in executables:
                return path, wrapped or plain
    return None


def plant(root: Path, touched: frozenset[str], with_failing: bool) -> list[Site]:
    """One site: the first test target's CMake file (module doc)."""
    if not touched:
        return []
    first = _first_test(root)
    if first is None:
        return []
    path, target = first
    try:
        text = path.read_bytes()  # (read again: comments were dropped for the search)
    except OSError:
        return []
    module, passing = token(), token()
    failing = token() if with_failing else None
    source = SOURCE.format(module=module, passing=passing, failing=failing or passing)
    block = BLOCK.format(
        module=module,
        target=target,
        source=source,
        passing=passing,
        failing_test=(
            FAILING_TEST.format(module=module, target=target, failing=failing) if failing else ""
        ),
    )
    cmake = os.path.relpath(path, root)
    return [
        Site(
            label=f"cpp {cmake}",
            names=(module,),
            passing=passing,
            failing=failing,
            files={cmake: appended(text, block)},
        )
    ]
