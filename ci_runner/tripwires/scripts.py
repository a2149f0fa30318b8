"""The files a pipeline's test runner may hide in: task runners' files and scripts.

A step that runs `make test` or `bash ci/test.sh` hides its runner's command line, and the
options that stop it at its first failure, in a file of the repository. The tripwires read
those files twice: to tell whether a failing tripwire may stop the run (every line of them,
`script_lines`), and to run the runner's line apart from the run (`hidden_lines`: only the
lines that can be run by themselves, in their folder, as the target or the script would
run them; the targets' recipes are read as the workflow reader reads them,
`ci_runner.workflows.commands.runner_lines`).
"""

from __future__ import annotations

import re
from pathlib import Path

from ci_runner.languages import profiles
from ci_runner.languages.shell import logical_lines
from ci_runner.languages.sites import plain_file
from ci_runner.pipeline import Pipeline
from ci_runner.workflows.commands import runner_lines

# task runners of no one language (each language's are its CommandWords.task_files)
TASK_FILES = ("Makefile", "makefile", "GNUmakefile", "justfile")
MAX_SCRIPT_BYTES = 256 * 1024
_PATH_WORD = re.compile(
    r"(?<![\w/.-])(?:\./)?((?:[\w.-]+/)*[\w.-]+\.(?:sh|bash|py|mk|ini|toml|cfg))\b"
)
_SHELL_SCRIPT = re.compile(r"(?<![\w/.-])(?:\./)?((?:[\w.-]+/)*[\w.-]+\.(?:sh|bash))\b")
_TARGET_TOOL = re.compile(r"(?:^|[\s;&|(])(?:g?make|just|mage)(?=\s|$)")
# what makes a line depend on what ran before it: a variable, a substitution, a folder or an
# environment set by an earlier line, make's one shell for a whole recipe
_EXPANDS = re.compile(r"[$`]")
_STATEFUL = re.compile(
    r"^\s*(?:cd|pushd|popd|source|\.|export|unset|eval|exec|alias)\b"
    r"|\bactivate\b|^\s*[A-Za-z_]\w*=\S*\s*$",
    re.MULTILINE,
)
# a script's own arguments passed on: none when the step names the script alone
_SCRIPT_ARGUMENTS = re.compile(r"\s\"?\$[@*]\"?(?=\s|$)")
_MAKE_PREFIX = re.compile(r"^[@+-]+\s*")  # a recipe line's silent, forced, errors ignored
_ONE_SHELL = re.compile(r"^\.ONESHELL\s*:|^export\b", re.MULTILINE)


def _read(path: Path, root: Path) -> str | None:
    if not plain_file(root, path) or path.stat().st_size > MAX_SCRIPT_BYTES:
        return None
    try:
        return path.read_text(errors="replace")
    except OSError:
        return None


def script_lines(root: Path, pipeline: Pipeline) -> list[str]:
    """The lines the steps run: their own, the task runners' files (tox.ini, Makefile...)
    and the scripts a step names (`bash ci/test.sh`), where a runner's options may hide."""
    lines = [line for step in pipeline.steps for line in logical_lines(step.run)]
    folders = {"", *(s.workdir for s in pipeline.steps)}
    names = [n for profile in profiles() for n in profile.commands.task_files] + list(TASK_FILES)
    paths = [root / d / name for d in folders for name in names]
    for step in pipeline.steps:
        for word in _PATH_WORD.findall(step.run):
            paths.append(root / step.workdir / word)
    for path in dict.fromkeys(paths):
        if (text := _read(path, root)) is not None:
            lines += text.splitlines()
    return lines


def _script_lines(root: Path, folder: str, line: str) -> list[str]:
    found = _SHELL_SCRIPT.search(line)
    text = _read(root / folder / found[1], root) if found else None
    if found is None or text is None or line[found.end() :].strip():
        return []  # a script given arguments may run anything with them
    lines = [_SCRIPT_ARGUMENTS.sub("", x) for x in logical_lines(text) if not x.startswith("#")]
    # one shell for the whole script: a line can be run alone only while none before it
    # changed the folder, the environment or the options
    alone = []
    for script_line in lines:
        if _STATEFUL.search(script_line):
            break
        alone.append(script_line)
    return alone


def _target_lines(root: Path, folder: str, line: str) -> list[tuple[str, str]]:
    """The runner lines a make or just target on `line` runs (its prerequisites' too), with
    the folder each runs in; none from a makefile whose recipes share one shell or that
    exports variables, none from a magefile (Go code, not shell lines)."""
    found = []
    for runner in runner_lines(line, folder, lambda path: _read(root / path, root)):
        if runner.via is None or ": mage " in runner.via:
            continue
        text = _read(root / runner.via.split(": ", 1)[0], root)
        if text is None or _ONE_SHELL.search(text):
            return []  # a recipe's lines share what earlier ones set
        found.append((runner.directory, _MAKE_PREFIX.sub("", runner.line)))
    return found


def hidden_lines(root: Path, pipeline: Pipeline, line: str) -> list[tuple[str, str]]:
    """The command lines a make or just target, or a shell script, named on `line` (a line
    of one of the pipeline's steps) runs that can be run by themselves, each with the folder
    it runs in, in order: none that expands a variable or a substitution (make's or the
    shell's), none of a script after a line that changes the folder or the environment, none
    of a makefile whose recipes share a shell or export variables."""
    step = next((s for s in pipeline.steps if line in logical_lines(s.run)), None)
    if step is None:
        return []
    if _TARGET_TOOL.search(line):
        found = _target_lines(root, step.workdir, line)
    else:
        found = [(step.workdir, x) for x in _script_lines(root, step.workdir, line)]
    return [(folder, x) for folder, x in found if not _EXPANDS.search(x)]
