"""C++: Debian's g++ (or a clang a leg asks for), CMake, ccache; ctest's JUnit or its log."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from pathlib import Path

from ci_runner.env_layout import CACHE_DIR, SYSTEM_PATH
from ci_runner.image_layout import WORKSPACE
from ci_runner.languages.cpp import results
from ci_runner.languages.cpp import tripwires as tripwires
from ci_runner.languages.cpp import twins as cpp_twins
from ci_runner.languages.profile import (
    COMMAND_END,
    COMMAND_START,
    CommandWords,
    LanguageProfile,
    ReadFile,
    TripwireForm,
)
from ci_runner.languages.reporting import Reporting, step_report
from ci_runner.languages.shell import logical_lines
from ci_runner.languages.sites import Site
from ci_runner.languages.toolchain import (
    DEFAULT_SUITE,
    ToolchainChoice,
    ToolchainRequest,
    from_suites,
    no_relaxations,
    no_request,
    official_major_minor,
    request_as_asked,
)
from ci_runner.languages.twins import TwinForm
from ci_runner.pipeline import Pipeline, ReportFormat, ReportSpec, Step

SUITE_VERSIONS = {"bookworm": "12", "trixie": "14"}  # g++
# the `clang` package of each suite (a leg that asks for clang-N gets package clang-N)
SUITE_CLANG = {"bookworm": "14", "trixie": "19"}
CTEST_REPORT = "arena-ctest.xml"

_COMPILER = re.compile(r"^(clang|gcc|g\+\+|llvm)(?:[-@ ]?(\d+))?", re.I)
_RUNNER_WORDS = re.compile(r"\bctest\b|\bmeson\s+test\b|\bninja\b|\bcmake\b")
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
_RUNNER = re.compile(COMMAND_START + r"(?:[\w.+-]*/)*ctest" + COMMAND_END)
# steps that configure or build the tests: the tripwires' CMake block must be in before them
_BUILDS = re.compile(COMMAND_START + r"(?:cmake|make|ninja)" + COMMAND_END)
# ctest options that stop the run at its first failing test
_STOPS = re.compile(r"--stop-on-failure|--repeat[ =]until-fail")
# the one a visible ctest line loses (`until-fail` repeats each test: no other is left out)
_STOP_OPTION = re.compile(r"[ \t]+--stop-on-failure(?=[ \t]|$)")
_LOOP = re.compile(r"(?:^|[\s;&|(])(?:for|while|until|xargs|parallel)\s")
# a cmake pinned below 3.21 by a setup step: its ctest has no --output-junit
_OLD_CMAKE = re.compile(r"\bcmake\s*(?:==|<=?|~=)\s*['\"]?3\.(?P<minor>\d+)")


def choose_toolchain(request: ToolchainRequest | None) -> ToolchainChoice:
    """The clang a leg asks for (its package, CC and CXX), or the suite's gcc."""
    found = _COMPILER.match(request.version.strip()) if request else None
    if request is None or found is None:
        return from_suites("cpp", SUITE_VERSIONS, request)
    name, major = found.group(1).lower(), found.group(2)
    suite = DEFAULT_SUITE
    if name in ("clang", "llvm"):
        package = f"clang-{major}" if major else "clang"
        # the sanitizers' runtimes, which GitHub's runner's clang has and Debian's splits off
        runtimes = f"libclang-rt-{major}-dev" if major else "libclang-rt-dev"
        suffix = f"-{major}" if major else ""
        version = f"clang {major or SUITE_CLANG[suite]}"
        env = (("CC", f"clang{suffix}"), ("CXX", f"clang++{suffix}"))
        return ToolchainChoice(suite, version, packages=(package, runtimes), env=env)
    gcc = SUITE_VERSIONS[suite]
    if major is None or major == gcc:
        return ToolchainChoice(suite, gcc)
    note = f"{request.source} asks for gcc {major}; runs on gcc {gcc} ({suite})"
    return ToolchainChoice(suite, gcc, (note,), deviation=note)


def official_tag(version: str) -> str:
    """gcc's images are tagged by major version."""
    major = re.search(r"\d+", version)
    return major.group(0) if major else "latest"


def official_lacks(request: ToolchainRequest) -> bool:
    """gcc images have no clang: a compiler request is Debian's, on the official image."""
    return _COMPILER.match(request.version) is not None


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


def _every_test(steps: list[Step], notes: list[str]) -> list[Step]:
    """The steps with `--stop-on-failure` dropped from each ctest line in their own text.

    A ctest that stops at the first failing test leaves out the tests after it, in every
    run where one fails: the runs a verdict compares (base, the patch, the reviewer's tests)
    would each report another subset, and a must-fail tripwire could not go in beside the
    tests (swing-protocol.md, "tripwires"). Run to its end, a ctest runs what it would have
    run had nothing failed. A ctest hidden in a script keeps the option (the task is then
    unguarded)."""
    out = []
    for step in steps:
        run = step.run
        for match in reversed(list(_CTEST.finditer(run))):
            args = _STOP_OPTION.sub("", match["args"])
            if args != match["args"]:
                run = run[: match.start("args")] + args + run[match.end("args") :]
        if run != step.run:
            notes.append(
                f"  step {step.name!r}: ctest runs every test (--stop-on-failure dropped), "
                "so each run reports the same tests and a tripwire may fail beside them"
            )
            step = step.model_copy(update={"run": run})
        out.append(step)
    return out


def report_rule(
    steps: list[Step],
    runners: dict[str, str],
    notes: list[str],
    setup: Sequence[Step],
    read_file: ReadFile,
) -> Reporting:
    """A `ctest` in a step's own text writes JUnit with `--output-junit`, and runs every
    test; else its log is read."""
    steps = _every_test(steps, notes)
    notes.append(
        "  ctest: a doctest, Catch2 or GoogleTest binary it runs whole is run again after "
        "the steps through its own reporter, its cases the ids (<ctest name>::<case>)"
    )
    if (junit := _ctest_junit(steps, setup, notes)) is not None:
        return Reporting(ReportSpec(format=ReportFormat.CTEST, path=CTEST_REPORT), {}, junit)
    return step_report(_RUNNER_WORDS, ReportFormat.CTEST, steps, runners, {})


def _may_fail(root: Path, pipeline: Pipeline, lines: list[str], last: re.Match[str]) -> bool:
    """No ctest option that stops at the first failing test."""
    return not any(_STOPS.search(line) for line in lines)


def _plant(root: Path, pipeline: Pipeline, touched: frozenset[str], failing: bool) -> list[Site]:
    return tripwires.plant(root, touched, failing)


COMMANDS = CommandWords(
    runs_tests=(
        r"ctest",
        r"ninja\s+(?:-\S+\s+)*test",
        r"meson\s+test",
        r"cmake\s+--build\s+\S+\s+--target\s+test",
    ),
    selects_no_test=(r"\bctest\b.*?\s(?:-N|--show-only)(?==|$|[\s;&|)])",),
    installs=(r"vcpkg\s+install\b", r"conan\s+install\b"),
    lints=(r"clang-format|clang-tidy|cpplint",),
)

# how a warm-up run says it could not set itself up (ci_runner.warmup)
SETUP_FAILURES = (
    ("CMake could not configure", r"Configuring incomplete, errors occurred"),
    ("a dependency's header is missing", r"fatal error: [^:\s]+\.h(?:pp|h)?: No such file"),
    ("a library is missing", r"/ld: cannot find -l\S+"),
)

PROFILE = LanguageProfile(
    name="cpp",
    packages=("g++", "cmake", "make", "ccache"),
    official_packages=("cmake", "make", "ccache"),
    official_repository="gcc",
    suite_versions=SUITE_VERSIONS,
    request_files=(),
    requested_version=no_request,
    choose_toolchain=choose_toolchain,
    settle_request=request_as_asked,
    official_version=official_major_minor,
    official_tag=official_tag,
    official_lacks=official_lacks,
    relaxations=no_relaxations,
    runtime_env={  # CMake through its launcher variables, plain make through PATH
        "CCACHE_DIR": f"{CACHE_DIR}/ccache",
        "CMAKE_C_COMPILER_LAUNCHER": "ccache",
        "CMAKE_CXX_COMPILER_LAUNCHER": "ccache",
        "PATH": f"/usr/lib/ccache:{SYSTEM_PATH}",
    },
    offline_only=(),
    dependency_manifest=None,
    declares_dependencies=lambda text: False,
    runner_words=_RUNNER_WORDS,
    commands=COMMANDS,
    matrix_keys=(),
    report_rule=report_rule,
    setup_failures=SETUP_FAILURES,
    results=results.RESULTS,
    scope_rules=(),  # ctest's selection is by name and label, not by file
    typical_image_mb=640,
    typical_env_layer_mb=1000,
    warm_build_cache=True,
    shares_repository_layer=True,
    tripwires=TripwireForm(
        runner=_RUNNER,
        report_format=ReportFormat.CTEST,
        plant=_plant,
        may_fail=_may_fail,
        builds=_BUILDS,
        twins=TwinForm(
            suffixes=(".cpp", ".cc", ".cxx", ".c++"),
            make=cpp_twins.make_twins,
            original_of=cpp_twins.original_of,
            names_beside=cpp_twins.declared_beside,
        ),
    ),
)
