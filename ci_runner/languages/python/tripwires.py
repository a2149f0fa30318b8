"""Python tripwires: a unittest module in each directory that holds test files.

A `unittest.TestCase` is collected by pytest (whatever its `python_classes` and
`python_functions` say), by `python -m unittest discover`, tox, nox, nose and Django's runner
alike, so one shape serves every runner. It goes beside the project's own test files, in
every such directory (pytest's `testpaths`, a `tests/unit` argument and unittest's start
directory all reach the directories their tests are in); its file name follows the project's
`python_files` when one is configured, else `test_<name>.py`, which both pytest's and
unittest's default patterns match. It imports nothing but `unittest`, so it cannot fail to
import where the project's own tests import, and it is written lint-clean (black, isort,
flake8, pylint's docstrings, mypy --strict), since lint steps may read it.
"""

from __future__ import annotations

import configparser
import fnmatch
import os
import re
import shlex
import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path

from ci_runner.languages.python.scope import PYTEST_LINE, PYTEST_VALUE_FLAGS
from ci_runner.languages.shell import arguments, shell_words
from ci_runner.languages.sites import Site, token
from ci_runner.pipeline import Pipeline
from ci_runner.tree_walk import walk

MAX_SITES = 64
DEFAULT_PATTERNS = ("test_*.py", "*_test.py", "test*.py")
# pytest's own norecursedirs, Python's caches, and folders that hold test data rather than
# tests (a sample project another test collects and counts must not get a test more)
SKIPPED_DIRS = frozenset(
    {"node_modules", "venv", "build", "dist", "site-packages", "CVS", "_darcs", "{arch}",
     "__pycache__", "fixtures", "testdata", "data", "examples", "samples", "resources",
     "assets", "snapshots", "cassettes", "vendor", "third_party"}
)  # fmt: skip
# pytest's own order: pytest.ini, pyproject.toml, tox.ini, setup.cfg
_CONFIGS = (
    ("pytest.ini", "pytest"),
    ("pyproject.toml", "tool.pytest.ini_options"),
    ("tox.ini", "pytest"),
    ("setup.cfg", "tool:pytest"),
)
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*\Z")

MODULE = '''"""Checks of this run's test report."""

import unittest


class Test{case}(unittest.TestCase):
    """Checks of this run's test report."""

    def test_{passing}(self) -> None:
        """Passes."""
{failing}'''
FAILING = '''
    def test_{failing}(self) -> None:
        """Fails."""
        self.fail("this test fails on purpose")
'''


def skipped_dir(name: str) -> bool:
    return name.startswith(".") or name in SKIPPED_DIRS or name.endswith((".egg", ".egg-info"))


def pytest_options(root: Path, config_dirs: Iterable[str]) -> tuple[tuple[str, ...], str]:
    """(`python_files` patterns, `addopts`) of the first pytest configuration found in the
    root or a step's working directory; the defaults when there is none or it cannot be read."""
    for directory in dict.fromkeys(["", *config_dirs]):
        base = root / directory
        for name, section in _CONFIGS:
            if name.endswith(".toml"):
                found = _toml_options(base / name)
            else:
                found = _ini_options(base / name, section)
            if found is not None:
                return found
    return DEFAULT_PATTERNS, ""


def _read_ini(path: Path) -> configparser.ConfigParser | None:
    """The ini file as written (no interpolation, repeated keys allowed); None where there
    is none or it cannot be read."""
    if not path.is_file():
        return None
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(path.read_text(errors="replace"))
    except (configparser.Error, OSError):
        return None
    return parser


def _ini_options(path: Path, section: str) -> tuple[tuple[str, ...], str] | None:
    parser = _read_ini(path)
    if parser is None or not parser.has_section(section):
        return None
    patterns = tuple(parser.get(section, "python_files", fallback="").split())
    return patterns or DEFAULT_PATTERNS, parser.get(section, "addopts", fallback="")


def _toml_options(path: Path) -> tuple[tuple[str, ...], str] | None:
    if not path.is_file():
        return None
    try:
        data = tomllib.loads(path.read_text(errors="replace"))
    except (tomllib.TOMLDecodeError, OSError):
        return None
    options = data.get("tool", {}).get("pytest", {}).get("ini_options")
    if not isinstance(options, dict):
        return None
    return _words(options.get("python_files")) or DEFAULT_PATTERNS, " ".join(
        _words(options.get("addopts"))
    )


def _words(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(value.split())
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    return ()


def module_name(patterns: tuple[str, ...], secret: str) -> str:
    """A module name the project's `python_files` collects, made of `secret`."""
    for pattern in patterns:
        if pattern.count("*") == 1 and pattern.endswith(".py") and "/" not in pattern:
            name = pattern.replace("*", secret).removesuffix(".py")
            if _IDENTIFIER.match(name) and fnmatch.fnmatch(f"{name}.py", pattern):
                return name
    return f"test_{secret}"


def test_dirs(root: Path, patterns: tuple[str, ...]) -> list[str]:
    """Directories (relative, `.` for the root) holding a file the patterns match."""
    found: list[str] = []
    for directory, subdirs, files in walk(root):
        subdirs[:] = sorted(d for d in subdirs if not skipped_dir(d))
        if any(fnmatch.fnmatch(f, p) for f in files if f.endswith(".py") for p in patterns):
            found.append(os.path.relpath(directory, root))
    return found


def plant(
    root: Path,
    config_dirs: Iterable[str],
    touched: frozenset[str],
    with_failing: bool,
) -> list[Site]:
    """One site per test directory, the directories the run's diffs touch first."""
    patterns, _ = pytest_options(root, config_dirs)
    dirs = test_dirs(root, patterns)
    touched_dirs = {os.path.dirname(p) or "." for p in touched}
    dirs.sort(key=lambda d: (d not in touched_dirs, d.count("/"), d))
    sites = []
    for directory in dirs[:MAX_SITES]:
        module = module_name(patterns, token())
        case, passing = token(), token()
        failing = token() if with_failing else None
        text = MODULE.format(
            case=case.capitalize(),
            passing=passing,
            failing=FAILING.format(failing=failing) if failing else "",
        )
        path = os.path.normpath(os.path.join(directory, f"{module}.py"))
        sites.append(
            Site(
                label=f"python {directory}",
                names=(module,),
                passing=f"test_{passing}",
                failing=f"test_{failing}" if failing else None,
                files={path: text.encode()},
            )
        )
    return sites


# options a pytest line is run apart without: those that stop at a failure or pick the tests
# (the apart invocation is given its files and must run every test in them), and the report's
_APART_DROPPED = frozenset((
    "-x", "--exitfirst", "--maxfail", "-k", "-m", "--deselect", "--ignore", "--ignore-glob",
    "--lf", "--last-failed", "--ff", "--failed-first", "--nf", "--new-first", "--co",
    "--collect-only", "--junitxml", "--junit-xml", "--pdb", "--trace",
))  # fmt: skip
_ATTACHED_SELECTION = re.compile(r"-[km][^-]")  # `-kslug`: a selection with its value attached
_SHORT_CLUSTER = re.compile(r"-[A-Za-z]{2,}")  # `-xvs`
_VALUE_FIRST = frozenset("kmnpcoWr")  # a cluster starting so is an option and its value
# pytest's stepwise plugin keeps where it stopped and starts there next time: a runner
# whose state is the run's own cannot be run apart
_STEPWISE = re.compile(r"(?:^|\s)--(?:sw|stepwise)(?:-skip)?(?=$|[\s=])|--sw-skip")


def _options_kept(words: list[str]) -> list[str]:
    """The line's options but those dropped (`_APART_DROPPED`), without its paths."""
    kept: list[str] = []
    for word in arguments(words, PYTEST_VALUE_FLAGS):
        text = word.text
        if word.name is None or word.name in _APART_DROPPED or _ATTACHED_SELECTION.match(text):
            continue
        if _SHORT_CLUSTER.fullmatch(text) and text[1] not in _VALUE_FIRST:
            text = text.replace("x", "")
            if text == "-":
                continue
        kept += [text, *word.value]
    return kept


def _apart_options(words: list[str], files: Sequence[str], report: str) -> str:
    """A pytest line's options run apart: on `files` alone, every test to its end, JUnit to
    `report`."""
    return shlex.join([*_options_kept(words), "--maxfail=0", f"--junitxml={report}", *files])


# a tox run, its command and its arguments (`tox -e py311`, `python -m tox run -e lint`)
_TOX_LINE = re.compile(
    r"(?P<head>(?:^|[\s;&|(])(?:python\d*(?:\.\d+)?\s+-m\s+)?tox)(?P<args>(?:\s[^;&|\n]*)?)$"
)
_TOX_ENV = re.compile(r"^(?:-e|--env)(?:=?(?P<attached>.+))?$")
_TOX_SUBCOMMAND = frozenset(("r", "run", "p", "run-parallel"))
_FACTOR = re.compile(r"^[\w.,!-]+:\s+")  # tox's `py311: pytest -x` (a factor-conditional line)
_POSARGS = re.compile(r"\{posargs(?::[^{}]*)?\}")


def _tox_env(args: str, pipeline: Pipeline) -> str | None:
    """The one tox environment a tox command line runs (`-e NAME`, else TOXENV)."""
    split = shell_words(args)
    if split is None or split[1]:
        return None
    words, envs = split[0], []
    for at, word in enumerate(words):
        if found := _TOX_ENV.match(word):
            value = found["attached"] or (words[at + 1] if at + 1 < len(words) else "")
            envs.append(value.lstrip("="))
        elif word.startswith("-") and word not in ("-q", "-v", "-vv", "-qq", "-r", "--recreate"):
            return None  # another config, a parallel run, an installer option...
        elif not word.startswith("-") and at == 0 and word not in _TOX_SUBCOMMAND:
            return None  # another subcommand (`tox list`)
    envs = envs or list(pipeline.env_values("TOXENV"))
    named = [e for e in envs if e]
    if len(named) != 1 or "," in named[0] or not re.fullmatch(r"[\w.-]+", named[0]):
        return None
    return named[0]


def _tox_pytest_args(root: Path, folders: Iterable[str], env: str) -> str | None:
    """The arguments of the last pytest line of the tox environment's `commands` (tox.ini),
    without its `{posargs}`; None where there is none, or it expands anything else."""
    for folder in dict.fromkeys(folders):
        path = root / folder / "tox.ini"
        if not path.is_file():
            continue
        parser = _read_ini(path)
        if parser is None:
            return None
        section = f"testenv:{env}" if parser.has_section(f"testenv:{env}") else "testenv"
        if not parser.has_option(section, "commands"):
            return None
        found = None
        for command in parser.get(section, "commands").splitlines():
            if match := PYTEST_LINE.search(_FACTOR.sub("", command.strip())):
                found = match
        if found is None:
            return None
        args = _POSARGS.sub("", found["args"])
        return None if re.search(r"[{}$`]", args) else args
    return None


def _tox_apart(
    root: Path, pipeline: Pipeline, line: str, files: Sequence[str], report: str
) -> str | None:
    """`tox exec` in the environment the tox line runs, of its pytest line on `files`: the
    environment's interpreter, its variables and folder, none of its installs again."""
    found = _TOX_LINE.search(line)
    env = _tox_env(found["args"], pipeline) if found is not None else None
    if found is None or env is None:
        return None
    args = _tox_pytest_args(root, ["", *(s.workdir for s in pipeline.steps)], env)
    split = shell_words(args) if args is not None else None
    if args is None or split is None or _STEPWISE.search(args):
        return None
    head = f"{found['head']} exec --skip-pkg-install -e {env} -- python -m pytest"
    return f"{line[: found.start('head')]}{head} {_apart_options(split[0], files, report)}".strip()


def apart_command(
    root: Path,
    pipeline: Pipeline,
    line: str,
    files: Sequence[str],
    names: Sequence[str],
    report: str,
) -> str | None:
    """The pytest line run on `files` alone, every test in them to its end, JUnit to
    `report` (after the options a configuration or PYTEST_ADDOPTS gives: the last wins);
    a tox line's pytest line in its environment (`_tox_apart`)."""
    _, addopts = pytest_options(root, (s.workdir for s in pipeline.steps))
    if any(_STEPWISE.search(text) for text in [addopts, *pipeline.env_values("PYTEST_ADDOPTS")]):
        return None
    found = PYTEST_LINE.search(line)
    if found is None:
        return _tox_apart(root, pipeline, line, files, report)
    split = shell_words(found["args"])
    if split is None or _STEPWISE.search(found["args"]):
        return None
    return f"{line[: found.start('args')].rstrip()} {_apart_options(split[0], files, report)}"
