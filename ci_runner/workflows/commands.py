"""What a step's shell text does: run tests, install dependencies, or something else.

Pure text rules over the `run:` script, one logical line at a time (backslash continuations
joined); a script the step calls (`./ci/test.sh`, `bash scripts/run_tests.sh`) is read once
through `read_file` to see whether it runs tests.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

ReadFile = Callable[[str], "str | None"]

MAX_LINE = 4096

TEST_RUNNERS = re.compile(
    r"(?:^|[\s;&|(`'\"/])(?:"
    r"py\.?test|tox|nox|go\s+test|cargo\s+(?:\+\S+\s+)?(?:test|nextest)|ctest"
    r"|make\s+(?:[^\s;&|]+\s+){0,8}?(?:test|tests|check|unittest)"
    r"|ninja\s+(?:-\S+\s+)*test|meson\s+test|python\d*(?:\.\d+)?\s+-m\s+unittest"
    r"|cmake\s+--build\s+\S+\s+--target\s+test"
    r")(?=$|[\s;&|)`'\"])",
    re.MULTILINE,
)

_SUDO = re.compile(r"(?:^|(?<=[\s;&|(]))sudo\s+(?:-u\s+\S+\s+|-[A-Za-z]+\s+)*")
_INSTALL = re.compile(
    r"^(?:(?:env\s+)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*)(?:"
    r"(?:python\d*(?:\.\d+)?\s+-m\s+)?pip3?\s+install\b"
    r"|pipx\s+install\b|poetry\s+install\b|pdm\s+install\b|pipenv\s+install\b"
    r"|uv\s+(?:pip\s+install|sync|tool\s+install|venv)\b"
    r"|(?:apt|apt-get|aptitude)\s+(?:-\S+\s+)*(?:install|update|upgrade|build-dep)\b"
    r"|(?:add-apt-repository|apt-add-repository|dpkg\s+-i)\b"
    r"|go\s+(?:mod\s+(?:download|vendor)|get|install)\b"
    r"|cargo\s+(?:\+\S+\s+)?(?:fetch|install)\b|rustup\b"
    r"|git\s+clone\b|wget\b|curl\b|vcpkg\s+install\b|conan\s+install\b"
    r")"
)
_LOCAL_PROJECT = re.compile(
    r"pip3?\s+install\s+(?:(?:-[^-e\s]\S*|--\S+)\s+)*['\"]?\.(?:\[[^\]]*\])?['\"]?(?:\s|$)"
)
_BENIGN = re.compile(
    r"^(?:#.*|echo\b.*|set\s+[-+]\S+.*|export\s+\w+=.*|cd\s+\S+|mkdir\b.*|ls\b.*|which\b.*"
    r"|\S+\s+--?version|true|:|(?:python\d*(?:\.\d+)?\s+-m\s+)?pip3?\s+(?:list|freeze|show)\b.*"
    r"|go\s+(?:version|env)\b.*)$"
)
_STATE = re.compile(r"^(?:cd\s+\S+|export\s+\w+=.*|set\s+[-+]\S+.*)$")
_SCRIPT = re.compile(
    r"(?:^|[\s;&|(])(?:(?:bash|sh|source|\.)\s+)?(?P<path>\.{0,2}/?[\w.-]+(?:/[\w.-]+)*\.(?:sh|bash))\b"
    r"|(?:^|[\s;&|(])(?P<exe>\./[\w.-]+(?:/[\w.-]+)*)(?=$|[\s;&|)])",
    re.MULTILINE,
)


# conda, mamba and micromamba make their own environments, which Arena cannot build
_CONDA = re.compile(
    r"(?:^|[\s;&|(`])(?:conda|mamba|micromamba)\s+(?:-\S+\s+)*"
    r"(?:install|create|env|activate|run|update|init|config|develop|build)\b",
    re.MULTILINE,
)


def uses_conda(script: str) -> bool:
    """The script runs conda, mamba or micromamba to make or use an environment."""
    return _CONDA.search("\n".join(logical_lines(script))) is not None


def _line_groups(script: str) -> list[tuple[int, str]]:
    """(index of the raw line after it, logical line) for each shell line, continuations joined."""
    groups: list[tuple[int, str]] = []
    pending: list[str] = []
    raw_lines = script.splitlines()
    for index, raw in enumerate(raw_lines):
        line = raw[:MAX_LINE].rstrip()
        if line.endswith("\\") and index + 1 < len(raw_lines):
            pending.append(line[:-1])
            continue
        pending.append(line.removesuffix("\\"))
        groups.append((index + 1, " ".join(p.strip() for p in pending).strip()[:MAX_LINE]))
        pending = []
    return groups


def logical_lines(script: str) -> list[str]:
    """Shell lines with backslash continuations joined, stripped, each capped at MAX_LINE."""
    return [line for _, line in _line_groups(script) if line]


def _commands(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"&&|\|\||;", line) if c.strip()]


def drop_sudo(script: str) -> str:
    return _SUDO.sub("", script)


def is_install(command: str) -> bool:
    return _INSTALL.match(drop_sudo(command)) is not None


def is_setup(script: str) -> bool:
    """Every command installs or fetches (or only echoes, cds, sets): a setup step."""
    commands = [c for line in logical_lines(script) for c in _commands(line)]
    installs = [c for c in commands if is_install(c)]
    return bool(installs) and all(c in installs or _BENIGN.match(c) for c in commands)


def split_installs(script: str) -> tuple[str, str] | None:
    """A step that installs first and then does other work, as (setup part, CI part).

    The CI part keeps the remaining lines verbatim, preceded by the `cd`/`export`/`set`
    commands of the install lines (they shape what follows) and by any install of the
    project itself (`pip install .` copies the tree, so every CI run must repeat it).
    """
    raw_lines = script.splitlines()
    end = 0
    installs = 0
    carried: list[str] = []
    for after, line in _line_groups(script):
        commands = _commands(line)
        if not all(is_install(c) or _BENIGN.match(c) for c in commands):
            break
        installs += sum(1 for c in commands if is_install(c))
        carried.extend(c for c in commands if _STATE.match(c) or installs_local_project(c))
        end = after
    rest = "\n".join(raw_lines[end:]).strip()
    if not installs or not rest:
        return None
    setup = "\n".join(raw_lines[:end]).strip()
    return setup, "\n".join([*carried, rest])


def installs_local_project(script: str) -> bool:
    """`pip install .` copies the tree as it is at build time: a CI run must install it again."""
    return any(_LOCAL_PROJECT.search(line) for line in logical_lines(script))


def test_runner(script: str, workdir: str, read_file: ReadFile) -> str | None:
    """The test runner the script runs, directly or through a script file it calls."""
    text = "\n".join(logical_lines(script))
    if found := TEST_RUNNERS.search(text):
        return found.group(0).strip(" \t;&|(`'\"/")
    for match in _SCRIPT.finditer(text):
        relative = match["path"] or match["exe"]
        path = posixpath.normpath(posixpath.join(workdir, relative))
        if path.startswith(("../", "/")):
            continue
        body = read_file(path)
        if body is not None and (inner := TEST_RUNNERS.search(body[: 256 * 1024])):
            return f"{inner.group(0).strip(' ;&|(`/')} (in {path})"
    return None
