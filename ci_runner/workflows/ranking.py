"""How likely a usable job leg runs the project's tests: its purposes and its place in the order.

Pure rules over a leg's names (display name, job id, matrix values) and over what its test
steps select (`tox -e docs`, `nox -s lint`, `make coverage`, `just fuzz`). The order is:

0. legs that run a recognised test runner, for no other purpose;
1. test variants: compat, 32-bit, minimal-versions, nightly and coverage legs;
2. legs whose commands are not recognised (they may still run the tests);
3. legs for another purpose (docs, lint, format, type-check, benchmark, fuzz, audit,
   release): candidates only after every other leg, and never alone.

Ties are broken, in this order, by: a runner of the task's language first (cargo for Rust,
go test for Go...), a listed leg before a fallback, fewer variant marks, the newest toolchain
version in the matrix (closest to what a current image provides; the dataset's jobs test each
version alike), then the order the legs were listed in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from ci_runner.languages import find_profile, profiles


class Purpose(StrEnum):
    TESTS = "tests"
    DOCS = "docs"
    LINT = "lint"
    FORMAT = "format"
    TYPE_CHECK = "type-check"
    BENCHMARK = "benchmark"
    FUZZ = "fuzz"
    AUDIT = "audit"
    RELEASE = "release"
    COVERAGE = "coverage"
    MINIMAL_VERSIONS = "minimal-versions"
    COMPAT = "compat"
    NIGHTLY = "nightly"
    HOUSEKEEPING = "housekeeping"  # the repository's issues, labels, boards through GitHub's API


NOT_TESTS = frozenset(
    {
        Purpose.DOCS,
        Purpose.LINT,
        Purpose.FORMAT,
        Purpose.TYPE_CHECK,
        Purpose.BENCHMARK,
        Purpose.FUZZ,
        Purpose.AUDIT,
        Purpose.RELEASE,
        Purpose.HOUSEKEEPING,
    }
)
VARIANTS = frozenset({Purpose.COVERAGE, Purpose.MINIMAL_VERSIONS, Purpose.COMPAT, Purpose.NIGHTLY})

_WORDS: tuple[tuple[Purpose, re.Pattern[str]], ...] = tuple(
    (purpose, re.compile(pattern, re.IGNORECASE))
    for purpose, pattern in (
        (Purpose.TESTS, r"\b(?:tests?|testing|pytest|unit|integration|e2e|ctest|testsuite)\b"),
        (Purpose.DOCS, r"\b(?:docs?|documentation|sphinx|mkdocs|readthedocs|doctest-docs)\b"),
        (
            Purpose.LINT,
            r"\b(?:lint|linting|linters?|flake8|pylint|ruff|clippy|rubocop|golangci(?:-lint)?"
            r"|code[-_ ]?quality|quality|pre-commit|precommit|codeql|analy[sz]e|sonar\w*"
            r"|clang-tidy|tidy|vet|spell\w*|codespell|reuse|dco|licen[cs]e|style|check-code\w*)\b",
        ),
        (Purpose.FORMAT, r"\b(?:format\w*|fmt|black|isort|prettier|clang-format)\b"),
        (Purpose.TYPE_CHECK, r"\b(?:mypy|pyright|type-?check\w*|typing|pytype)\b"),
        (Purpose.BENCHMARK, r"\b(?:bench\w*|perf|performance)\b"),
        (Purpose.FUZZ, r"\bfuzz\w*\b"),
        (
            Purpose.AUDIT,
            r"\b(?:audit|deny|security|vulnerabilit\w*|govulncheck|scorecards?"
            r"|dependency-review)\b",
        ),
        (
            Purpose.RELEASE,
            r"\b(?:release|publish\w*|deploy\w*|pypi|sdist|upload|goreleaser|changelog)\b",
        ),
        (Purpose.COVERAGE, r"\b(?:coverage|cover|codecov|coveralls|lcov|grcov|tarpaulin)\b"),
        (
            Purpose.MINIMAL_VERSIONS,
            r"\b(?:minimal[-_ ]versions?|min[-_]versions?|msrv|oldest|lowest[-_ ]direct)\b",
        ),
        (
            Purpose.COMPAT,
            r"(?:\bx32\b|\b32[-_ ]?bits?\b|\bi[36]86\b|\bx86\b(?![-_]64)|\barm32\b|compat\b"
            r"|\bcompatibility\b)",
        ),
        (Purpose.NIGHTLY, r"\bnightly\b"),
        (
            Purpose.HOUSEKEEPING,
            r"\b(?:triage|stale|labell?er|backports?|auto[-_ ]?merge|greetings?"
            r"|project[-_ ]boards?)\b",
        ),
    )
)
# what a runner step selects: a tox env, a nox session, a make target or just recipe
_SELECTIONS = re.compile(
    r"(?:\btox\b[^\n;&|]*?\s-e\s*(?P<tox>\S+)|\bTOXENV=(?P<toxenv>\S+)"
    r"|\bnox\b[^\n;&|]*?\s(?:-s|--session|-e|--sessions)[\s=]+(?P<nox>\"[^\"]*\"|'[^']*'|\S+)"
    r"|\b(?:make|just)\s+(?:-\S+\s+)*(?P<target>[\w.-]+))"
)
_COMMANDS: tuple[tuple[Purpose, re.Pattern[str]], ...] = tuple(
    (purpose, re.compile(pattern))
    for purpose, pattern in (
        (Purpose.FUZZ, r"\bcargo\s+(?:\+\S+\s+)?fuzz\b|\bgo\s+test\b.*\s-fuzz\b"),
        (Purpose.BENCHMARK, r"\bcargo\s+(?:\+\S+\s+)?bench\b"),
        (Purpose.AUDIT, r"\bcargo\s+(?:deny|audit)\b|\bgovulncheck\b|\bpip-audit\b"),
        (Purpose.DOCS, r"\bsphinx-build\b|\bmkdocs\s+build\b|\bcargo\s+(?:\+\S+\s+)?doc\b"),
        (Purpose.RELEASE, r"\btwine\s+upload\b|\bcargo\s+publish\b|\bgoreleaser\b"),
        (Purpose.MINIMAL_VERSIONS, r"-Z\s*minimal-versions\b"),
        # GitHub's CLI on the repository's issues, pull requests, boards, releases
        (
            Purpose.HOUSEKEEPING,
            r"(?:^|[\s;&|(`$])gh\s+(?:api|pr|issue|project|label|release|run|workflow|repo"
            r"|search|secret|variable|gist|cache)\b",
        ),
    )
)
_NEUTRAL = re.compile(r"^(?:make|gmake|just|bazel)\b|\.sh\b")
_VERSION = re.compile(r"^v?(\d+(?:\.\d+)*)")


def purposes_of_text(text: str) -> set[Purpose]:
    """The purposes words of a name (`lint`, `docs`, `x32`, `tests`...) say."""
    spaced = text.replace("_", " ")
    return {
        purpose for purpose, pattern in _WORDS if pattern.search(text) or pattern.search(spaced)
    }


def purposes_of_commands(runs: list[str]) -> set[Purpose]:
    """The purposes what the commands select (tox env, nox session, make/just target) say,
    and those of tools only used for one purpose (cargo fuzz, cargo deny, sphinx-build)."""
    found: set[Purpose] = set()
    for run in runs:
        for match in _SELECTIONS.finditer(run):
            selected = next(g for g in match.groups() if g is not None).strip("'\"")
            found |= purposes_of_text(selected) - {Purpose.TESTS}
        found |= {purpose for purpose, pattern in _COMMANDS if pattern.search(run)}
    return found


def language_fit(runners: list[str], language: str) -> int:
    """0: a runner of the task's language; 1: a neutral or unknown one; 2: another language's."""
    if not runners:
        return 1
    own = find_profile(language)
    if own is not None and any(own.runner_words.search(r) for r in runners):
        return 0
    if any(_NEUTRAL.search(r) for r in runners):
        return 1
    words = [p.runner_words for p in profiles()]
    return 2 if any(w.search(r) for w in words for r in runners) else 1


def version_key(version: str | None) -> tuple[int, ...]:
    """A toolchain version as numbers, for newest-first ordering; () when not numeric."""
    found = _VERSION.match(version.strip()) if version else None
    return tuple(int(p) for p in found[1].split(".")) if found else ()


# legs that test something else than the unit tests, or on another machine or architecture:
# after the legs that test the project's own code natively, unless the gold tests are there
_INTEGRATION = re.compile(
    r"\b(?:integration|e2e|end[-_ ]to[-_ ]end|acceptance|smoke|system[-_ ]tests?)\b",
    re.IGNORECASE,
)
_FOREIGN_ARCH = re.compile(
    r"\b(?:s390x?|ppc64(?:le)?|power(?:pc)?|arm|arm64|aarch64|armv\d\w*|armhf|riscv\d*|mips\w*"
    r"|loong\w*|qemu|ibm[-_ ]?z"
    # a Linux leg named for another OS cross-builds for it (`build (windows-amd64)`)
    r"|windows|win32|win64|darwin|macos|osx|freebsd|openbsd|netbsd|dragonfly|solaris|illumos"
    r"|aix|android|ios|wasm|wasip?\d?|js)\b",
    re.IGNORECASE,
)


def placement(names: str, gold_paths: list[str]) -> tuple[int, str]:
    """0 for a leg that tests natively; 1 for an integration or end-to-end leg (unless a gold
    test lies in such a folder); 2 for a leg on another architecture, with why."""
    if _FOREIGN_ARCH.search(names.replace("_", " ")):
        return 2, "another architecture or OS, ranked after native legs"
    if _INTEGRATION.search(names.replace("_", " ")) and not any(
        _INTEGRATION.search(p.replace("_", " ").replace("/", " ")) for p in gold_paths
    ):
        return 1, "an integration leg, ranked after unit legs"
    return 0, ""


@dataclass(frozen=True)
class Assessment:
    tier: int  # 0 tests, 1 test variant, 2 unrecognised commands, 3 another purpose
    purposes: frozenset[Purpose]
    key: tuple[object, ...]  # sort key: smaller is better
    why: str
    reaches_gold: bool = False  # its test commands' scope holds a gold test


def assess(
    *,
    names: str,
    runner_runs: list[str],
    other_runs: list[str],
    runners: list[str],
    language: str,
    fallback: bool,
    version: str | None,
    order: int,
    evidence: int = 1,
    evidence_why: str = "",
    place: tuple[int, str] = (0, ""),
) -> Assessment:
    """Where a usable leg goes in the order, and why.

    `names` is the leg's display name, job id and matrix values; `runner_runs` the run text of
    its steps with a recognised test runner, `other_runs` that of its other CI steps.
    `evidence` says whether its runners reach the gold tests (`scope.Evidence`: 0 they do, 1
    unknown, 2 they leave them out) and `place` where it tests (`placement`). A leg that
    leaves the gold tests out comes after every other test-like leg; evidence orders legs
    of one tier before their place, their language and their listing.
    """
    named = purposes_of_text(names)
    selected = purposes_of_commands(runner_runs if runners else runner_runs + other_runs)
    purposes = frozenset(named | selected)
    # an all-in-one job named for its lint ("Rust quality gate", "lint and test") whose test
    # runners select nothing of the kind tests all the same: its name only ranks it later
    named_only = sorted((named & NOT_TESTS) - selected) if runners else []
    not_tests = sorted((purposes & NOT_TESTS) - set(named_only))
    variants = sorted(purposes & VARIANTS)
    if not_tests:
        tier = 3
        why = f"a {'/'.join(not_tests)} leg, not a test job: ranked after every test-like leg"
    elif runners:
        tier = 1 if variants or named_only else 0
        why = f"runs tests ({'; '.join(runners)})"
        if variants:
            why += f"; a {'/'.join(variants)} leg, ranked after plain test legs"
        if named_only:
            why += f"; named as a {'/'.join(named_only)} leg too, ranked after plain test legs"
    else:
        tier = 2
        why = "runs commands not recognised as tests, ranked after test legs"
        if Purpose.TESTS in named:
            why += "; its name says it tests, ranked before such legs that do not say so"
    fit = language_fit(runners, language)
    if fit == 0:
        why += f"; a {language} test runner"
    if fallback:
        why += "; a fallback (not listed in ci_name_list)"
    if version:
        why += f"; toolchain {version}"
    if evidence_why:
        why += f"; {evidence_why}"
    if place[1]:
        why += f"; {place[1]}"
    newest = tuple(-n for n in version_key(version))
    misses = evidence == 2
    key = (
        tier == 3,
        misses,
        tier,
        tier == 2 and Purpose.TESTS not in named,  # electron's `test` before `checkout-linux`
        evidence,
        place[0],
        fit,
        fallback,
        len(variants),
        not newest,
        newest,
        order,
    )
    return Assessment(
        tier=tier, purposes=purposes, key=key, why=why, reaches_gold=evidence == 0 and tier < 3
    )
