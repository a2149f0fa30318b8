"""Where a derived pipeline's test results are read from, per language, tests untouched.

pytest writes JUnit through `PYTEST_ADDOPTS` (tox passes it on); a `go test` in a step's own
text gets `-json`, and one hidden behind make, just or a script gets `-v` through `GOFLAGS`,
so that its `--- PASS:` lines reach the log; a `ctest` in a step's own text writes JUnit with
`--output-junit` (ctest 3.21 or later; Debian bookworm has 3.25); cargo's libtest lines are
read from the test step's log. Whenever the named report cannot be read (a wrapper hid it,
or an older ctest wrote none), the runner reads the test lines of every step's log instead
(`ci_runner.reports.console`: pytest's summary, `go test -v`, libtest, ctest, unittest -v).
A doctest, Catch2 or GoogleTest binary that ctest runs whole is split into its cases by the
runner after the steps (`ci_runner.reports.binaries`): nothing in the steps changes for it.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ci_runner.pipeline import ReportFormat, ReportSpec, Step
from ci_runner.workflows.commands import logical_lines
from ci_runner.workflows.legs import WORKSPACE
from ci_runner.workflows.ranking import language_fit

REPORT_FILE = "arena-report.xml"
CTEST_REPORT = "arena-ctest.xml"
# JUnit to the report file, and the short summary of every test for the console fallback
PYTEST_OPTIONS = f"-rap --junitxml={WORKSPACE}/{REPORT_FILE}"
GO_VERBOSE = "-v"
# options the pipeline adds to what the job sets itself, rather than replacing it
APPENDED = ("PYTEST_ADDOPTS", "GOFLAGS")

_GO_TEST = re.compile(r"\bgo test\b(?!.*-json)")
_VISIBLE_GO_TEST = re.compile(r"\bgo\s+test\b")
# `ctest` where a command starts (after ; & | ( `, a keyword, or variable assignments); an
# attempt never scans past the next separator, so a script is matched in linear time
_CTEST = re.compile(
    r"(?P<head>(?:^|[;&|(`])[ \t]*(?:(?:then|do|else|time|!)[ \t]+)*"
    r"(?:[A-Za-z_]\w*=[^\s;&|]*[ \t]+)*)(?P<command>(?:[\w.+-]*/)*ctest)(?=[ \t;&|)`]|$)"
    r"(?P<args>[^\n;&|)`]*)",
    re.MULTILINE,
)
# options under which ctest runs no tests of its own, or already writes JUnit
_CTEST_NOT_A_RUN = re.compile(
    r"^(?:-S|-SP|-D|-T|-M|-N|-h|--help|--version|--show-only|--build-and-test|--print-labels"
    r"|--output-junit)(?:=|$)"
)
_LOOP = re.compile(r"(?:^|[\s;&|(])(?:for|while|until|xargs|parallel)\s")
# a cmake pinned below 3.21 by a setup step: its ctest has no --output-junit
_OLD_CMAKE = re.compile(r"\bcmake\s*(?:==|<=?|~=)\s*['\"]?3\.(?P<minor>\d+)")


@dataclass(frozen=True)
class Reporting:
    """How the pipeline's tests are read: the report, what the pipeline's env gets (values of
    `APPENDED` keys go after the job's own), and the CI steps as they must now run."""

    report: ReportSpec
    env: dict[str, str]
    steps: list[Step]


class ReportRuleError(ValueError):
    """No report rule for the task's language."""


_LEGACY_PASSENV = re.compile(r"^\s*passenv\s*=", re.MULTILINE)
TOX_FILES = ("tox.ini", "setup.cfg", "pyproject.toml")


def tox_pass_env_key(read_file: Callable[[str], str | None], workdir: str) -> str:
    """The spelling of tox's pass_env that the project's config uses: an override under the
    other spelling would shadow the project's own list (its PGHOST would no longer pass)."""
    for name in TOX_FILES:
        text = read_file(posixpath.normpath(posixpath.join(workdir, name)))
        if text and _LEGACY_PASSENV.search(text):
            return "passenv"
    return "pass_env"


def report_for(
    language: str,
    steps: list[Step],
    runners: dict[str, str],
    notes: list[str],
    setup: Sequence[Step] = (),
    read_file: Callable[[str], str | None] = lambda _: None,
) -> Reporting:
    """How the derived pipeline's tests are read; `runners` maps a step to its test runner,
    `setup` is what the environment build runs (it may pin the tools)."""
    if language == "python":
        # every pytest run writes JUnit, whatever its command line says; tox 4 passes it on
        pytest_env = {"PYTEST_ADDOPTS": PYTEST_OPTIONS}
        tox_steps = [s for s in steps if "tox" in runners.get(s.name, "")]
        if tox_steps:
            key = tox_pass_env_key(read_file, tox_steps[0].workdir)
            pytest_env["TOX_OVERRIDE"] = f"testenv.{key}+=PYTEST_ADDOPTS"
            notes.append(f"  tox: PYTEST_ADDOPTS passed through with TOX_OVERRIDE ({key})")
        steps = [with_appended(s, "PYTEST_ADDOPTS", PYTEST_OPTIONS) for s in steps]
        return Reporting(ReportSpec(format=ReportFormat.JUNIT, path=REPORT_FILE), pytest_env, steps)
    formats = {"go": ReportFormat.GO_JSON, "rust": ReportFormat.LIBTEST, "cpp": ReportFormat.CTEST}
    if language not in formats:
        raise ReportRuleError(f"no report rule for language {language!r}")
    env: dict[str, str] = {}
    if language == "go":
        steps = [s.model_copy(update={"run": _GO_TEST.sub("go test -json", s.run)}) for s in steps]
        env, steps = _go_verbose(steps, runners, notes)
    if language == "cpp":
        notes.append(
            "  ctest: a doctest, Catch2 or GoogleTest binary it runs whole is run again after "
            "the steps through its own reporter, its cases the ids (<ctest name>::<case>)"
        )
    if language == "cpp" and (junit := _ctest_junit(steps, setup, notes)) is not None:
        return Reporting(ReportSpec(format=ReportFormat.CTEST, path=CTEST_REPORT), {}, junit)
    testing = [s for s in steps if s.name in runners] or steps
    own = [s for s in testing if language_fit([runners.get(s.name, "")], language) == 0]
    testing = own or testing  # the report is the language's own runner's, not a helper's
    return Reporting(ReportSpec(format=formats[language], step=testing[-1].name), env, steps)


def with_appended(step: Step, key: str, value: str) -> Step:
    """A step whose own env sets `key` keeps its value, with `value` after it."""
    if key not in step.env:
        return step
    return step.model_copy(update={"env": {**step.env, key: f"{step.env[key]} {value}"}})


def _go_verbose(
    steps: list[Step], runners: dict[str, str], notes: list[str]
) -> tuple[dict[str, str], list[Step]]:
    """`GOFLAGS=-v` when a test step's `go test` is not in its own text (make, just, a
    script): `go test` then prints `--- PASS:` lines, which the console fallback reads."""
    testing = [s for s in steps if s.name in runners] or steps
    hidden = [s.name for s in testing if not _VISIBLE_GO_TEST.search(s.run)]
    if not hidden:
        return {}, steps
    shown = ", ".join(repr(name) for name in hidden)
    notes.append(
        f"  no go test in the text of {shown}: GOFLAGS gets -v, so a go test run inside "
        "prints its test lines"
    )
    return {"GOFLAGS": GO_VERBOSE}, [with_appended(s, "GOFLAGS", GO_VERBOSE) for s in steps]


def _ctest_runs(script: str) -> tuple[list[re.Match[str]], int]:
    """The ctest commands of a script that run tests, and how many runs they may make (a
    loop may run one many times)."""
    found = []
    runs = 0
    loops = any(_LOOP.search(line) for line in logical_lines(script))
    for match in _CTEST.finditer(script):
        try:
            words = shlex.split(match["args"], comments=True)
        except ValueError:
            words = match["args"].split()
        if any(_CTEST_NOT_A_RUN.match(word) for word in words):
            continue
        found.append(match)
        runs += 2 if loops else 1
    return found, runs


def _ctest_junit(steps: list[Step], setup: Sequence[Step], notes: list[str]) -> list[Step] | None:
    """The steps with `--output-junit` given to their one ctest run; None (the test step's
    log is read) when no step runs ctest itself, or it runs more than once."""
    runs = {s.name: _ctest_runs(s.run) for s in steps}
    total = sum(count for _, count in runs.values())
    if total == 0:
        return None
    if total > 1:
        notes.append("  ctest runs more than once: its console lines are read, not one JUnit file")
        return None
    for step in setup:
        if (old := _OLD_CMAKE.search(step.run)) is not None and int(old["minor"]) < 21:
            notes.append(
                f"  ctest: setup step {step.name!r} pins cmake 3.{old['minor']}, older than "
                "3.21 (no --output-junit): its console lines are read"
            )
            return None
    option = f" --output-junit {WORKSPACE}/{CTEST_REPORT}"
    out = []
    for step in steps:
        matches, _ = runs[step.name]
        if matches:
            at = matches[0].end("command")
            step = step.model_copy(update={"run": step.run[:at] + option + step.run[at:]})
            notes.append(
                f"  step {step.name!r}: ctest writes JUnit to {CTEST_REPORT} (--output-junit); "
                "without it, the console lines of the logs are read"
            )
        out.append(step)
    return out
