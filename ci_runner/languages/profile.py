"""What CI knows of one language, as one frozen record a language module fills in."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ci_runner.languages.toolchain import ToolchainChoice, ToolchainRequest
from ci_runner.pipeline import Pipeline, ReportFormat, Step

if TYPE_CHECKING:  # the layers that apply a profile import it; it names their types only
    from ci_runner.languages.reporting import Reporting
    from ci_runner.languages.results import ResultRules
    from ci_runner.languages.scope import ScopeRule
    from ci_runner.languages.sites import Site
    from ci_runner.languages.twins import TwinForm

ReadFile = Callable[[str], "str | None"]
# where a command starts and ends, around a test runner's pattern
COMMAND_START = r"(?:^|[\s;&|(`'\"/])"
COMMAND_END = r"(?=$|[\s;&|)`'\"])"


class ReportRule(Protocol):
    """How a derived pipeline's tests are read: `runners` maps a step to its test runner,
    `setup` is what the environment build runs (it may pin the tools), `notes` is appended to."""

    def __call__(
        self,
        steps: list[Step],
        runners: dict[str, str],
        notes: list[str],
        setup: Sequence[Step],
        read_file: ReadFile,
    ) -> Reporting: ...


class Planter(Protocol):
    """The tripwire sites of a tree at `root` (`touched`: paths the run's diffs change);
    `failing`: whether the tripwire that must fail may be planted too."""

    def __call__(
        self, root: Path, pipeline: Pipeline, touched: frozenset[str], failing: bool
    ) -> list[Site]: ...


class FailRule(Protocol):
    """Whether no option stops the test runner at its first failure: `lines` are the lines
    the steps run (with the task runners' files and named scripts), `last` the runner's
    match on the last line of the last step."""

    def __call__(
        self, root: Path, pipeline: Pipeline, lines: list[str], last: re.Match[str]
    ) -> bool: ...


class ApartCommand(Protocol):
    """The runner line `line` turned into one that runs only the tests of `files` (absolute
    paths in the sandbox) and never stops at a failure, for the must-fail tripwires' own
    invocation; `names` are the tests to select where the runner selects by name, `report`
    where a runner that writes its report to a file writes it. None where the line's runner
    cannot be told to (an option it cannot be run without, a runner that keeps state)."""

    def __call__(
        self,
        root: Path,
        pipeline: Pipeline,
        line: str,
        files: Sequence[str],
        names: Sequence[str],
        report: str,
    ) -> str | None: ...


@dataclass(frozen=True)
class CommandWords:
    """How a step's shell text names the language's tools, as regex alternatives (each
    matched at a command's start, `ci_runner.workflows.commands` joins every language's): a
    command that runs its tests, one of those that selects none (it compiles or lists them),
    one that installs or fetches (setup, run at build time), one that only lints, formats or
    type-checks, one harmless beside those (prints a version), a pattern naming a
    toolchain (groups `plus` or `named`: `cargo +1.75`, `rustup default nightly`), and the
    files of its task runners."""

    runs_tests: tuple[str, ...] = ()
    selects_no_test: tuple[str, ...] = ()
    installs: tuple[str, ...] = ()
    lints: tuple[str, ...] = ()
    benign: tuple[str, ...] = ()
    names_toolchain: re.Pattern[str] | None = None
    # files of its task runners whose lines a step may run (tox.ini): read with the steps'
    task_files: tuple[str, ...] = ()


@dataclass(frozen=True)
class TripwireForm:
    """How a language's tripwire tests are found a place, and when one may fail."""

    runner: re.Pattern[str]  # a command that runs the language's tests
    report_format: ReportFormat  # a report in this format is of the language's tests
    plant: Planter
    may_fail: FailRule
    builds: re.Pattern[str] | None = None  # steps that compile the tests, when not the runner
    twins: TwinForm | None = None  # how it copies unseen tests into must-fail twins
    # the must-fail tripwires' own invocation, where the pipeline's cannot carry them
    apart: ApartCommand | None = None


@dataclass(frozen=True)
class LanguageProfile:
    """One language's CI: its image, toolchain choice, environment build, report and tripwires.

    Fields group by the layer that reads them (`ci_runner.images`, `.toolchains`,
    `.environments`, `.workflows`, `.tripwires`); a module-level default in
    `ci_runner.languages.toolchain` stands for "nothing of the kind in this language".
    """

    name: str
    # image (ci_runner.images): Debian packages of the toolchain, and what an official
    # image of it still needs for the CI steps
    packages: tuple[str, ...]
    official_packages: tuple[str, ...]
    official_repository: str  # under ARENA_TOOLCHAIN_REGISTRY
    # toolchain (ci_runner.toolchains): suite -> the version it packages
    suite_versions: Mapping[str, str]
    request_files: tuple[str, ...]  # read at the base commit for a requested version
    requested_version: Callable[[Mapping[str, str]], ToolchainRequest | None]
    choose_toolchain: Callable[[ToolchainRequest | None], ToolchainChoice]
    # (the job's request, the repo's, the files) -> the request that wins, with notes
    settle_request: Callable[
        [ToolchainRequest | None, ToolchainRequest | None, Mapping[str, str]],
        tuple[ToolchainRequest | None, tuple[str, ...]],
    ]
    official_version: Callable[[ToolchainRequest], str]
    official_tag: Callable[[str], str]
    # a request the official image cannot serve (a compiler it lacks): Debian's, on it
    official_lacks: Callable[[ToolchainRequest], bool]
    relaxations: Callable[[ToolchainChoice, Mapping[str, str]], tuple[str, ...]]
    # environment build (ci_runner.environments)
    runtime_env: Mapping[str, str]  # every CI run of an environment image starts with these
    offline_only: tuple[str, ...]  # ... of which these are left out of the build's own
    dependency_manifest: str | None  # the file whose dependencies need a fetch (go.mod)
    declares_dependencies: Callable[[str], bool]  # ... whether its text declares any
    # workflow derivation (ci_runner.workflows)
    runner_words: re.Pattern[str]  # a test runner of the language, in a step's command
    commands: CommandWords  # what its tools look like in a step's shell text
    matrix_keys: tuple[str, ...]  # matrix keys that name the toolchain's version
    report_rule: ReportRule
    results: ResultRules  # how its reports, log lines and summary lines are read
    # (what went wrong, a log line's pattern) of a warm-up run that could not set itself up
    # (ci_runner.warmup: pip could not resolve, a Go module is missing)
    setup_failures: tuple[tuple[str, str], ...]
    # how the scope of its runner lines is read (which gold tests a leg reaches): none read
    scope_rules: tuple[ScopeRule, ...]
    # disk estimates (ci_runner.environments): typical own size of the language's image over
    # its suite's base, and of an environment image's own layer (a cargo target dir or a C++
    # build tree dominates, a Go module cache or a virtualenv is smaller), as measured here
    typical_image_mb: int
    typical_env_layer_mb: int
    official_setup: str = ""  # Dockerfile lines an official image gets (pytest)
    suite_setup: str = ""  # Dockerfile lines an image of Debian's toolchain gets (shims)
    prepare: str = ""  # run first in the build container
    collect: str | None = None  # keeps what offline runs need (a wheelhouse, modules)
    # locks the dependencies as of the task's date before any setup step runs, where the
    # repo has no lock of its own and the date-cut index serves the language's registry
    lock_as_of: str | None = None
    # the command that fetches requirements the gold patch adds, for offline runs
    fetch_requirements: Callable[[str], str] | None = None
    runner_libraries: tuple[str, ...] = ()  # GitHub's runner has them, no step names them
    warm_online: bool = False  # test runners fetch more on their own: warm with network
    warm_build_cache: bool = False  # CI steps leave a build cache worth keeping
    # whether a task's environment may be built on another task's of the same repository:
    # true where what one commit leaves behind cannot change another's runs (modules and
    # crates pinned by go.sum and Cargo.lock, build caches keyed by content); false where
    # leftovers would be used (a venv or wheelhouse holding packages newer than the task's
    # date, which pip keeps as "already satisfied")
    shares_repository_layer: bool = False
    # run last in the build of an image others may be built on: keeps their builds from
    # changing its files (a file of a lower layer changed at all is copied up whole)
    seal_layer: str = ""
    # command -> a script first on PATH in environment builds only, in its stead (cargo's:
    # `cargo install` of a release the image's compiler supports)
    build_shims: Mapping[str, str] = field(default_factory=dict)
    tripwires: TripwireForm | None = None  # None: the language gets none (C++, see plan)
