"""Test binaries that ctest runs whole (doctest, Catch2, GoogleTest), and their cases as ids.

A binary registered once (`add_test(NAME unit_tests COMMAND unit_tests)`) is one ctest test
however many cases it holds, and a reviewer's new case would never be a new id. So after the
pipeline the runner lists each build tree's tests as ctest itself knows them
(`ctest --show-only=json-v1`: command, working directory, environment), runs every binary
that ctest ran whole again as ctest ran it, through its framework's own reporter, and puts its
cases in place of its id, named `<ctest name>::<case>` (`unit_tests::Math.Adds`,
`unit_tests::trim keeps inner spaces`): ids as stable as the cases' names.

A test is run again only when nothing could make a second run differ: its command is a
binary built in the workspace and registered once (not case by case, as
`gtest_discover_tests` does), with no option that selects cases or reporters, and no
property that changes its verdict or needs another test first (WILL_FAIL, output regexes,
fixtures). Its framework is told by its bytes, never by running it for a probe.
When the binary failed and none of its cases says so (a crash at exit, a leak checker), its
own id stays beside the cases, failed, so no failure is ever lost by splitting a binary up.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from ci_runner.languages.outcomes import Outcomes, record
from ci_runner.types import TestOutcome

MAX_TREES = 8  # build trees listed at most
NOT_A_FRAMEWORK = 97  # exit code of a case run whose binary no framework was found in
_FAILING = (TestOutcome.FAILED, TestOutcome.ERROR)
RAN = (TestOutcome.PASSED, *_FAILING)


def discovery_script(workspace: str) -> str:
    """Bash that makes a fresh directory for the case reports, writes each build tree's test
    listing into it (`ctest-N.json`) and prints `out\\tDIR` and `tree\\tN\\tBUILD_DIR` lines."""
    root = shlex.quote(workspace)
    return f"""out=$(mktemp -d /tmp/arena-cases.XXXXXXXX)
printf 'out\\t%s\\n' "$out"
n=0
while IFS= read -r -d '' cache; do
  dir=${{cache%/CMakeCache.txt}}
  case $dir in *$'\\n'* | *$'\\t'*) continue ;; esac
  [ -f "$dir/CTestTestfile.cmake" ] || continue
  n=$((n + 1))
  if (cd "$dir" && ctest --show-only=json-v1 >"$out/ctest-$n.json" 2>/dev/null); then
    printf 'tree\\t%s\\t%s\\n' "$n" "$dir"
  fi
  [ "$n" -lt {MAX_TREES} ] || break
done < <(find {root} -maxdepth 6 \\( -name .git -o -name CMakeFiles -o -name _deps \\
  -o -name node_modules \\) -prune -o -name CMakeCache.txt -type f -print0 2>/dev/null | sort -z)
"""


@dataclass(frozen=True)
class Discovery:
    """Where the case reports go, and the listing file of each build tree."""

    out: str
    trees: tuple[tuple[str, str], ...]  # (listing file, build directory)


def parse_discovery(output: str) -> Discovery | None:
    out: str | None = None
    trees: list[tuple[str, str]] = []
    for line in output.splitlines():
        kind, _, rest = line.partition("\t")
        if kind == "out" and rest.startswith("/tmp/arena-cases."):
            out = rest
        elif kind == "tree" and out is not None:
            number, _, build_dir = rest.partition("\t")
            if number.isdigit() and build_dir.startswith("/"):
                trees.append((f"{out}/ctest-{number}.json", build_dir))
    return None if out is None else Discovery(out, tuple(trees))


@dataclass(frozen=True)
class WholeBinary:
    """A ctest test that runs one test binary whole, as ctest runs it."""

    name: str  # the ctest test's name
    command: tuple[str, ...]
    workdir: str
    environment: tuple[str, ...]  # NAME=value
    timeout_s: float | None  # its TIMEOUT property


# options that pick cases, reporters or listings (doctest's also behind `--dt-`): a test
# given one is not the whole binary, or its report would not be ours
_SELECTING = frozenset(
    {
        *("gtest_filter", "gtest_output", "gtest_list_tests", "gtest_repeat"),
        "gtest_also_run_disabled_tests",
        *("tc", "test-case", "tce", "test-case-exclude", "ts", "test-suite", "tse"),
        *("test-suite-exclude", "sf", "source-file", "sfe", "source-file-exclude", "sc"),
        *("subcase", "sce", "subcase-exclude", "f", "first", "l", "last", "aa", "abort-after"),
        *("ltc", "list-test-cases", "lts", "list-test-suites", "lr", "list-reporters"),
        *("c", "count", "r", "reporter", "reporters", "o", "out", "list-tests", "list-tags"),
        *("list-listeners", "t", "#", "filenames-as-tags", "section", "shard-count"),
        "shard-index",
    }
)
# properties under which a second run could not stand for ctest's: its verdict is not the
# exit code, or it needs (or is) a fixture of other tests
_BLOCKING = (
    "WILL_FAIL",
    "DISABLED",
    "PASS_REGULAR_EXPRESSION",
    "FAIL_REGULAR_EXPRESSION",
    "SKIP_REGULAR_EXPRESSION",
    "FIXTURES_REQUIRED",
    "FIXTURES_SETUP",
    "FIXTURES_CLEANUP",
    "ENVIRONMENT_MODIFICATION",
)
_FALSE = frozenset({"", "0", "OFF", "FALSE", "NO", "N", "IGNORE", "NOTFOUND"})
_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*=")


def _selects(argument: str) -> bool:
    """Whether an argument may narrow or redirect the run: an option of `_SELECTING`, or a
    word without a dash (a Catch2 test spec, or a value whose option we cannot tell)."""
    if not argument.startswith("-"):
        return True
    name = argument.lstrip("-").split("=", 1)[0]
    return name.removeprefix("dt-") in _SELECTING


def _set(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.strip().upper() not in _FALSE and not value.upper().endswith("-NOTFOUND")
    if isinstance(value, (list, dict)):
        return bool(value)
    return value is not None and value != 0


def _listed_tests(data: bytes) -> list[dict[str, Any]]:
    try:
        listing = json.loads(data)
    except (ValueError, RecursionError):
        return []
    tests = listing.get("tests") if isinstance(listing, dict) else None
    return [t for t in tests if isinstance(t, dict)] if isinstance(tests, list) else []


def _command(test: dict[str, Any]) -> tuple[str, ...]:
    command = test.get("command")
    if not isinstance(command, list) or not all(isinstance(a, str) for a in command):
        return ()
    return tuple(command)


def _properties(test: dict[str, Any]) -> dict[str, Any]:
    found = test.get("properties")
    if not isinstance(found, list):
        return {}
    return {
        p["name"]: p.get("value")
        for p in found
        if isinstance(p, dict) and isinstance(p.get("name"), str)
    }


def _environment(value: Any) -> tuple[str, ...]:
    entries = value if isinstance(value, list) else str(value or "").split(";")
    return tuple(e for e in entries if isinstance(e, str) and _ASSIGNMENT.match(e))


def _seconds(value: Any) -> float | None:
    """A positive number of seconds (ctest's TIMEOUT), else None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value)
    return None


def _inside(path: str, workspace: str) -> bool:
    root = workspace.rstrip("/") + "/"
    return posixpath.isabs(path) and posixpath.normpath(path).startswith(root)


def _whole(
    test: dict[str, Any], build_dir: str, uses: Counter[str], workspace: str
) -> WholeBinary | None:
    command = _command(test)
    if not command or uses[command[0]] != 1 or not _inside(command[0], workspace):
        return None
    if any(_selects(argument) for argument in command[1:]):
        return None
    properties = _properties(test)
    if any(_set(properties.get(name)) for name in _BLOCKING):
        return None
    workdir = properties.get("WORKING_DIRECTORY")
    return WholeBinary(
        name=str(test["name"]),
        command=command,
        workdir=workdir if isinstance(workdir, str) and posixpath.isabs(workdir) else build_dir,
        environment=_environment(properties.get("ENVIRONMENT")),
        timeout_s=_seconds(properties.get("TIMEOUT")),
    )


def whole_binaries(
    trees: Sequence[tuple[str, bytes]],
    ran: Collection[str],
    workspace: str,
    not_the_projects: Collection[str] = (),
) -> list[WholeBinary]:
    """The tests of `ran` (ids of the run's ctest report) that run a binary whole, from the
    listings of the build trees (`(build directory, ctest --show-only=json-v1 output)`): the
    tree whose tests the report names most is the one ctest ran. Tests named in
    `not_the_projects` (the runner's tripwires, which run a project binary under their own
    names) are left out of the listing, so they never make a binary look registered twice."""
    best: tuple[str, list[dict[str, Any]]] | None = None
    best_hits = 0
    for build_dir, data in trees:
        tests = [
            test
            for test in _listed_tests(data)
            if isinstance(test.get("name"), str) and test["name"] not in not_the_projects
        ]
        hits = sum(1 for test in tests if test["name"] in ran)
        if hits > best_hits:
            best, best_hits = (build_dir, tests), hits
    if best is None:
        return []
    build_dir, tests = best
    uses = Counter(command[0] for test in tests if (command := _command(test)))
    found = (_whole(test, build_dir, uses, workspace) for test in tests if test["name"] in ran)
    return [binary for binary in found if binary is not None]


def case_run_script(binary: WholeBinary, report: str, timeout_s: float) -> str:
    """Bash that runs the binary as ctest did, its framework's reporter writing `report`;
    it exits with the binary's code, or `NOT_A_FRAMEWORK`. The framework is told by marks in
    the binary's bytes: doctest's `[doctest]` banner, GoogleTest's flag names or mangled
    `testing::internal`, Catch2's mangled `Catch::` namespace."""
    q = shlex.quote
    executable = q(binary.command[0])
    command = " ".join(q(word) for word in binary.command)
    environment = " ".join(q(entry) for entry in binary.environment)
    limit = min(timeout_s, binary.timeout_s or timeout_s)
    return (
        f"cd {q(binary.workdir)}\n"
        f"if grep -qaF -e '[doctest]' -e _ZN7doctest {executable}; then\n"
        f"  set -- --reporters=xml --out={q(report)}\n"
        f"elif grep -qaF -e gtest_list_tests -e _ZN7testing8internal {executable}; then\n"
        f"  set -- --gtest_output=xml:{q(report)}\n"
        f"elif grep -qaF -e _ZN5Catch -e Catch:: {executable}; then\n"
        f"  set -- -r xml -o {q(report)}\n"
        f"else\n  exit {NOT_A_FRAMEWORK}\nfi\n"
        f'exec env -- {environment} timeout -k 5 {max(int(limit), 1)} {command} "$@"\n'
    )


def case_id(binary: str, case: str) -> str:
    return f"{binary}::{case}"


def with_cases(tests: Outcomes, binary: str, cases: Outcomes, exit_code: int | None) -> Outcomes:
    """`tests` with the binary's id replaced by its cases' ids, in its place. The binary
    failed (in ctest's run, or with its exit code in ours) while no case failed: its id
    stays, failed, beside the cases."""
    ran = tests[binary]
    failed = ran in _FAILING or exit_code != 0
    explained = any(outcome in _FAILING for outcome in cases.values())
    merged: Outcomes = {}
    for test_id, outcome in tests.items():
        if test_id != binary:
            record(merged, test_id, outcome)
            continue
        for case, case_outcome in cases.items():
            record(merged, case_id(binary, case), case_outcome)
        if failed and not explained:
            record(merged, binary, ran if ran in _FAILING else TestOutcome.FAILED)
    return merged
