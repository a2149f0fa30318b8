"""Go: a Go release from the module proxy (Debian's golang-go to bootstrap), `go test -json`."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from ci_runner.env_layout import CACHE_DIR, GOMODCACHE, SYSTEM_PATH
from ci_runner.go_toolchain import go_release, release_key
from ci_runner.languages.golang import results, scope
from ci_runner.languages.golang import tripwires as tripwires
from ci_runner.languages.golang import twins as go_twins
from ci_runner.languages.profile import (
    COMMAND_END,
    COMMAND_START,
    CommandWords,
    LanguageProfile,
    ReadFile,
    TripwireForm,
)
from ci_runner.languages.reporting import Reporting, step_report, with_appended
from ci_runner.languages.sites import Site
from ci_runner.languages.toolchain import (
    DEFAULT_SUITE,
    ToolchainChoice,
    ToolchainRequest,
    bookworm_tag,
    from_suites,
    installed_file,
    never,
    no_relaxations,
)
from ci_runner.languages.twins import TwinForm
from ci_runner.pipeline import Pipeline, ReportFormat, Step

# Debian's golang-go: only the bootstrap of a release the repo asks for
SUITE_VERSIONS = {"bookworm": "1.19", "trixie": "1.24"}
GO_VERBOSE = "-v"
# `go test` prints its tests' lines whatever GOFLAGS a wrapper gives it: a magefile's own
# `GOFLAGS: ""`, a script's export. First on the image's PATH, before the toolchain's `go`
# (a release's in /usr/local/bin, else Debian's); `-json` and `-v` already print them.
GO_SHIM = """#!/bin/sh
# Arena's go (ci_runner/languages/golang/__init__.py): go test prints its tests' lines (-v)
for real in /usr/local/bin/go /usr/bin/go; do
    [ -x "$real" ] && break
done
if [ "${1:-}" = test ]; then
    for word in "$@"; do
        case "$word" in
            -json|-v|-v=true|--json|--v) exec "$real" "$@" ;;
            -args) break ;;
        esac
    done
    shift
    exec "$real" test -v "$@"
fi
exec "$real" "$@"
"""
SHIM_PATH = "/usr/local/sbin/go"  # first on ci_runner.env_layout.SYSTEM_PATH

_GO_TEST = re.compile(r"\bgo test\b(?!.*-json)")
_VISIBLE_GO_TEST = re.compile(r"\bgo\s+test\b")
_RUNNER = re.compile(COMMAND_START + r"(?:go\s+test|\$[({]GO[)}]\s+test|gotestsum)" + COMMAND_END)
_RUNNER_WORDS = re.compile(r"\bgo\s+test\b|\$[({]GO[)}]\s+test|gotestsum")
_GOTESTSUM = re.compile(r"\bgotestsum\b")
_FAILFAST = re.compile(r"-{1,2}failfast\b")
_REQUIRE = re.compile(r"^\s*require\b", re.MULTILINE)
_COLLECT = """if [ -f go.mod ]; then go mod download; fi
find . -mindepth 2 -name go.mod -not -path '*/vendor/*' -not -path './.git/*' |
while read -r mod; do
  (cd "$(dirname "$mod")" && go mod download) ||
    echo "arena: the modules of $mod could not be fetched; runs that need them fail offline"
done"""

# go marks a build cache entry used by setting its mtime to now when it is over an hour old,
# which in a build on this image days later would copy every entry it uses into the new
# layer; an mtime in the future is never over an hour old (and never trimmed, which an
# image's cache is not anyway)
_SEAL_LAYER = f"""find {CACHE_DIR}/go-build -type f ! -newermt 2099-01-01 \\
  -exec touch -c -d 2100-01-01 {{}} + 2>/dev/null || true"""


def requested_version(files: Mapping[str, str]) -> ToolchainRequest | None:
    """go.mod's toolchain line, else its go line."""
    if "go.mod" not in files:
        return None
    text = files["go.mod"]
    toolchain = re.search(r"^toolchain\s+go(\S+)", text, re.M)
    line = re.search(r"^go\s+(\S+)", text, re.M)
    if toolchain:
        return ToolchainRequest(toolchain.group(1), "go.mod toolchain line")
    if line:
        return ToolchainRequest(line.group(1), "go.mod go line")
    return None


def choose_toolchain(request: ToolchainRequest | None) -> ToolchainChoice:
    """The exact release asked for, from the module proxy; Debian's own Go when none is."""
    if request is None:
        return from_suites("go", SUITE_VERSIONS, None)
    release, why = go_release(request.version)
    if why is None:
        return ToolchainChoice(DEFAULT_SUITE, release, go_release=release)
    note = f"{request.source}: {why}"
    return ToolchainChoice(DEFAULT_SUITE, release, (note,), go_release=release, deviation=note)


def settle_request(
    request: ToolchainRequest | None, from_repo: ToolchainRequest | None, files: Mapping[str, str]
) -> tuple[ToolchainRequest | None, tuple[str, ...]]:
    """A job's older release gives way to the go.mod's newer one, as GOTOOLCHAIN=auto
    would switch."""
    if request is None or from_repo is None:
        return request, ()
    job, repo = go_release(request.version)[0], go_release(from_repo.version)[0]
    if release_key(repo) >= (1, 21, 0) and release_key(repo) > release_key(job):
        note = (
            f"the job asks for Go {job}; {from_repo.source} needs {repo}, which Go "
            "switches to on its own (GOTOOLCHAIN=auto)"
        )
        return from_repo, (note,)
    return request, ()


def _verbose(
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
    env = {"GOFLAGS": GO_VERBOSE}
    if any(_GOTESTSUM.search(s.run) for s in testing):
        env["GOTESTSUM_FORMAT"] = "standard-verbose"  # gotestsum prints go test -v's lines
        notes.append("  gotestsum prints its tests as go test -v does (GOTESTSUM_FORMAT)")
    return env, [with_appended(s, "GOFLAGS", GO_VERBOSE) for s in steps]


def report_rule(
    steps: list[Step],
    runners: dict[str, str],
    notes: list[str],
    setup: Sequence[Step],
    read_file: ReadFile,
) -> Reporting:
    """A `go test` in a step's own text gets `-json`; a hidden one `-v` through GOFLAGS."""
    steps = [s.model_copy(update={"run": _GO_TEST.sub("go test -json", s.run)}) for s in steps]
    env, steps = _verbose(steps, runners, notes)
    return step_report(
        _RUNNER_WORDS, ReportFormat.GO_JSON, steps, runners, env, appended=("GOFLAGS",)
    )


def _may_fail(root: Path, pipeline: Pipeline, lines: list[str], last: re.Match[str]) -> bool:
    """No `-failfast` in the lines the steps run or in GOFLAGS."""
    texts = [*lines, *pipeline.env_values("GOFLAGS")]
    return not any(_FAILFAST.search(text) for text in texts)


def _plant(root: Path, pipeline: Pipeline, touched: frozenset[str], failing: bool) -> list[Site]:
    return tripwires.plant(root, touched, failing)


COMMANDS = CommandWords(
    runs_tests=(r"go\s+test", r"\$[({]GO[)}]\s+test", r"gotestsum"),
    selects_no_test=(
        r"\bgo\s+test\b.*?\s-(?:test\.)?run(?:=|\s+)(?P<q>['\"]?)\^\$(?P=q)(?=$|[\s;&|)])",
        r"\bgo\s+test\b.*?\s-list(?:=|\s+)",
    ),
    installs=(r"go\s+(?:mod\s+(?:download|vendor)|get|install)\b",),
    lints=(r"golangci-lint|gofmt|staticcheck|go\s+vet",),
    benign=(r"go\s+(?:version|env)\b.*",),
)

# how a warm-up run says it could not set itself up (ci_runner.warmup)
SETUP_FAILURES = (
    ("a Go module is missing", r"missing go\.sum entry"),
    ("a Go module is missing", r"no required module provides package"),
    ("a Go module is missing", r"cannot find module providing package"),
    ("Go could not fetch a module", r"^go: .*(?:dial tcp|GOPROXY=off|module lookup disabled)"),
    ("the Go toolchain is too old", r"requires go >= \S+ \(running go"),
    ("the Go toolchain is too old", r"go\.mod requires go >= "),
)

PROFILE = LanguageProfile(
    name="go",
    # cgo (and so `go test -race`) needs a C compiler, which GitHub's runner always has
    packages=("golang-go", "gcc", "libc6-dev"),
    official_packages=(),
    official_repository="golang",
    suite_versions=SUITE_VERSIONS,
    request_files=("go.mod",),
    requested_version=requested_version,
    choose_toolchain=choose_toolchain,
    settle_request=settle_request,
    official_version=lambda request: go_release(request.version)[0],
    official_tag=bookworm_tag,
    official_lacks=never,
    relaxations=no_relaxations,
    runtime_env={
        "GOMODCACHE": GOMODCACHE,
        "GOCACHE": f"{CACHE_DIR}/go-build",
        "GOPROXY": "off",
        "GOTOOLCHAIN": "local",
        "GOPATH": f"{CACHE_DIR}/gopath",
        "PATH": SYSTEM_PATH,
    },
    offline_only=("GOPROXY",),
    # a job's `go test` fetches modules itself, which an offline run cannot
    dependency_manifest="go.mod",
    declares_dependencies=lambda text: bool(_REQUIRE.search(text)),
    runner_words=_RUNNER_WORDS,
    commands=COMMANDS,
    matrix_keys=("go-version", "go"),
    report_rule=report_rule,
    setup_failures=SETUP_FAILURES,
    results=results.RESULTS,
    scope_rules=(scope.SCOPE,),
    suite_setup=installed_file(SHIM_PATH, GO_SHIM),
    typical_image_mb=755,
    typical_env_layer_mb=300,
    # the repo's own module must fetch; a nested one (a compat module whose `replace` points
    # into a git submodule the checkout lacks) is fetched where it can be, and said where not
    collect=_COLLECT,
    warm_build_cache=True,
    shares_repository_layer=True,
    seal_layer=_SEAL_LAYER,
    tripwires=TripwireForm(
        runner=_RUNNER,
        report_format=ReportFormat.GO_JSON,
        plant=_plant,
        may_fail=_may_fail,
        apart=tripwires.apart_command,
        twins=TwinForm(
            suffixes=("_test.go",),
            make=go_twins.make_twins,
            original_of=go_twins.original_of,
            names_beside=go_twins.declared_beside,
        ),
    ),
)
