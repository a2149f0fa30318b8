"""Rust: Debian's rustc and cargo (a newer suite's when the lock or edition needs it), libtest."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from ci_runner.env_layout import CACHE_DIR, SYSTEM_PATH, WARM_UP_VARIABLE
from ci_runner.languages.profile import (
    COMMAND_END,
    COMMAND_START,
    CommandWords,
    LanguageProfile,
    ReadFile,
    TripwireForm,
)
from ci_runner.languages.reporting import Reporting, step_report
from ci_runner.languages.rust import results, scope
from ci_runner.languages.rust import tripwires as tripwires
from ci_runner.languages.rust import twins as rust_twins
from ci_runner.languages.rust.scope import CARGO_BEFORE_SUBCOMMAND
from ci_runner.languages.sites import Site
from ci_runner.languages.toolchain import (
    ToolchainChoice,
    ToolchainRequest,
    bookworm_tag,
    from_suites,
    installed_file,
    major_minor,
    never,
    no_relaxations,
    official_major_minor,
    table,
    toml,
)
from ci_runner.languages.twins import TwinForm
from ci_runner.pipeline import Pipeline, ReportFormat, Step

SUITE_VERSIONS = {"bookworm": "1.63", "trixie": "1.85"}

_CARGO = CARGO_BEFORE_SUBCOMMAND
_RUNNER = re.compile(COMMAND_START + _CARGO + r"(?:test|t|nextest)" + COMMAND_END)
# `cargo test` and `cargo nextest run`, both of which stop at their first failing binary
# (nextest at its first failing test) unless told `--no-fail-fast`
_CARGO_TEST = re.compile(COMMAND_START + _CARGO + r"(?:test|t|nextest\s+run)" + COMMAND_END)
_REST_OF_COMMAND = re.compile(r"[^;&|\n]*")
# steps that compile Rust test targets: tripwires must be in place before the first
_BUILDS = re.compile(
    COMMAND_START + _CARGO + r"(?:build|b|test|t|nextest|check|c|clippy|run|r|bench)" + COMMAND_END
)
_RUNNER_WORDS = re.compile(r"\bcargo\b|nextest")
_DEPENDENCY = re.compile(
    r"^\[(?:[\w.-]+\.)?(?:dev-|build-)?dependencies(?:\.[\w-]+)?\]\s*\n\s*[\w\"-]",
    re.MULTILINE,
)
# a workspace root declares its members, whose own manifests hold the dependencies
_WORKSPACE = re.compile(r"^\[workspace\]", re.MULTILINE)
_COLLECT = """if [ -f Cargo.toml ]; then cargo fetch; fi"""
# a repo without Cargo.lock locks what crates.io had on the task's date (the date-cut index's
# sparse crates index, by source replacement: the lock still names crates.io); a cargo that
# cannot read a sparse index (Debian bookworm's 1.63) resolves today's versions, and says so
_LOCK_AS_OF = """if [ -f Cargo.toml ] && [ ! -f Cargo.lock ] && [ -n "${ARENA_CRATES_INDEX:-}" ]
then
  if cargo --config "source.crates-io.replace-with='arena-dated'" \\
      --config "source.arena-dated.registry='$ARENA_CRATES_INDEX'" generate-lockfile; then
    echo "arena: Cargo.lock resolved as of the task's date"
  else
    rm -f Cargo.lock
    echo "arena: $(cargo --version) cannot lock as of the task's date: today's versions" >&2
  fi
fi"""

# Debian's Rust has no rustup, while jobs run `cargo +stable test`, `rustup toolchain install`,
# `rustup component add`: a rustup that lets the image's one toolchain stand for the one named
# (the task's toolchain request, from the same step, records the difference) and a cargo that
# takes `+TOOLCHAIN`. Official rust images have rustup itself.
RUSTUP = """#!/bin/sh
# rustup, as far as one toolchain goes: Arena's Rust image has Debian's rustc and cargo, which
# stand for whatever toolchain a job names (the task records how that differs from its request)
version=$(/usr/bin/rustc --version | cut -d' ' -f2)
note() { echo "arena: rustup $*: the image's Rust $version stands for it" >&2; }
case "$1" in
  -V|--version) echo "rustup 1.27.1 (arena: one toolchain, rustc $version)" ;;
  show) echo "active toolchain: $version-x86_64-unknown-linux-gnu (the image's)" ;;
  toolchain)
    case "$2" in
      list) echo "$version-x86_64-unknown-linux-gnu (default)" ;;
      *) note "$@" ;;
    esac ;;
  default|override|update|install|set|self|uninstall) note "$@" ;;
  component)
    case "$2" in
      list) for c in rust-std rustc cargo; do echo "$c-x86_64-unknown-linux-gnu (installed)"; done
        ;;
      *) note "$@" ;;
    esac ;;
  target)
    case "$2" in
      list) echo "x86_64-unknown-linux-gnu (installed)" ;;
      add|install)
        shift 2
        for target in "$@"; do
          case "$target" in
            -*|x86_64-unknown-linux-gnu) ;;
            *) echo "arena: rustup target add $target: only x86_64 Linux is installed" >&2
               exit 1 ;;
          esac
        done ;;
      *) note "$@" ;;
    esac ;;
  run) shift 2; exec "$@" ;;
  which) command -v "$2" ;;
  *) echo "arena: rustup $1 is not available (the image has one Rust toolchain)" >&2; exit 1 ;;
esac
"""
CARGO = f"""#!/bin/sh
# `cargo +TOOLCHAIN` is rustup's: the image's one toolchain (Debian's) runs instead, taking
# nightly flags when a nightly was asked for (RUSTC_BOOTSTRAP=1)
case "$1" in
  +*)
    toolchain=${{1#+}}
    shift
    case "$toolchain" in
      stable) ;;
      nightly*) export RUSTC_BOOTSTRAP=1
        echo "arena: cargo +$toolchain runs $(/usr/bin/rustc --version), nightly features on" >&2 ;;
      *) echo "arena: cargo +$toolchain runs $(/usr/bin/rustc --version)" >&2 ;;
    esac ;;
esac
# an environment's warm-up builds the tests of a `cargo [flags] test` and runs none (--no-run);
# a flag taking a value before `test` (`--config X`) leaves the command as it is
if [ -n "${{{WARM_UP_VARIABLE}:-}}" ]; then
  at=0
  found=
  for word in "$@"; do
    at=$((at + 1))
    case "$word" in
      test) found=yes; break ;;
      -*) ;;
      *) break ;;
    esac
  done
  case " $* " in *" --doc "*) found= ;; esac  # doctests cannot be built without a run
  if [ -n "$found" ]; then
    seen=0
    for word in "$@"; do
      seen=$((seen + 1))
      set -- "$@" "$word"
      [ "$seen" -eq "$at" ] && set -- "$@" --no-run
    done
    shift "$seen"
  fi
fi
exec /usr/bin/cargo "$@"
"""


SUITE_SETUP = installed_file("/usr/local/bin/rustup", RUSTUP) + installed_file(
    "/usr/local/bin/cargo", CARGO
)


def _rust_version(files: Mapping[str, str]) -> str | None:
    cargo = toml(files.get("Cargo.toml"))
    for found in (table(cargo, "package"), table(table(cargo, "workspace"), "package")):
        value = found.get("rust-version")
        if isinstance(value, str):
            return value
    return None


def requested_version(files: Mapping[str, str]) -> ToolchainRequest | None:
    """`rust-toolchain` (plain or TOML), `rust-toolchain.toml`, else Cargo's rust-version."""
    if files.get("rust-toolchain", "").strip():
        first = files["rust-toolchain"].strip().splitlines()[0].strip()
        if not first.startswith("["):
            return ToolchainRequest(first, "rust-toolchain")
        files = {**files, "rust-toolchain.toml": files["rust-toolchain"]}
    channel = table(toml(files.get("rust-toolchain.toml")), "toolchain").get("channel")
    if isinstance(channel, str):
        return ToolchainRequest(channel, "rust-toolchain.toml")
    minimum = _rust_version(files)
    if minimum is not None:
        return ToolchainRequest(minimum, "Cargo.toml rust-version")
    return None


def rust_floor(files: Mapping[str, str]) -> ToolchainRequest | None:
    """The oldest Rust that can read the repo at all (its Cargo.lock format, its edition)."""
    lock = re.search(r"^version\s*=\s*(\d+)", files.get("Cargo.lock", ""), re.M)
    if lock and int(lock.group(1)) >= 4:
        return ToolchainRequest("1.78", "Cargo.lock version 4")
    if re.search(r"^edition\s*=\s*\"2024\"", files.get("Cargo.toml", ""), re.M):
        return ToolchainRequest("1.85", "edition 2024")
    return None


def settle_request(
    request: ToolchainRequest | None, from_repo: ToolchainRequest | None, files: Mapping[str, str]
) -> tuple[ToolchainRequest | None, tuple[str, ...]]:
    """A request older than what Cargo.lock or the edition needs gives way to that. A job
    and repo that name no Rust ran on the runner's own, the stable Rust of its day: the
    newest packaged here stands for it, never Debian bookworm's 1.63 (older than most
    crates allow, and its cargo reads crates.io only through a git index on GitHub)."""
    if request is None:
        request = ToolchainRequest("stable", "the runner's own Rust (the job names none)")
    floor = rust_floor(files)
    if floor is None:
        return request, ()
    wanted = major_minor(request.version) if request else (0, 0)
    if wanted is not None and wanted < (major_minor(floor.version) or (0, 0)):
        return ToolchainRequest(floor.version, floor.source), (
            f"{floor.source} needs Rust >= {floor.version}",
        )
    return request, ()


def choose_toolchain(request: ToolchainRequest | None) -> ToolchainChoice:
    return from_suites("rust", SUITE_VERSIONS, request)


def report_rule(
    steps: list[Step],
    runners: dict[str, str],
    notes: list[str],
    setup: Sequence[Step],
    read_file: ReadFile,
) -> Reporting:
    """cargo's libtest lines, read from the test step's log; every `cargo test` in a step's
    text runs all its test binaries."""
    changed = [_every_binary(s) for s in steps]
    if changed != steps:
        notes.append(
            "  cargo test (and nextest run) gets --no-fail-fast: a failing test no longer "
            "hides the results of those after it, and a tripwire that must fail can be planted"
        )
    return step_report(_RUNNER_WORDS, ReportFormat.LIBTEST, changed, runners, {})


def _every_binary(step: Step) -> Step:
    """The step with `--no-fail-fast` after each `cargo test` or `cargo nextest run` in its
    text that lacks it."""

    def with_flag(found: re.Match[str]) -> str:
        rest = _REST_OF_COMMAND.match(found.string, found.end())
        if rest is not None and "--no-fail-fast" in rest.group():
            return found.group()
        return found.group() + " --no-fail-fast"

    run = _CARGO_TEST.sub(with_flag, step.run)
    return step if run == step.run else step.model_copy(update={"run": run})


def _may_fail(root: Path, pipeline: Pipeline, lines: list[str], last: re.Match[str]) -> bool:
    """`cargo test --no-fail-fast`: without it the first failing binary stops the rest."""
    return "--no-fail-fast" in last.string[last.start() :]


def _plant(root: Path, pipeline: Pipeline, touched: frozenset[str], failing: bool) -> list[Site]:
    return tripwires.plant(root, touched, failing)


COMMANDS = CommandWords(
    runs_tests=(rf"{CARGO_BEFORE_SUBCOMMAND}(?:test|nextest)",),
    selects_no_test=(r"\bcargo\b.*?\s--no-run\b",),
    installs=(r"cargo\s+(?:\+\S+\s+)?(?:fetch|install)\b", r"rustup\b"),
    lints=(r"cargo\s+(?:\+\S+\s+)?(?:fmt|clippy)",),
    # `cargo +1.75 test`, `rustup toolchain install nightly`, `rustup default stable`,
    # `rustup override set 1.80.0` (rustup's own commands, not cargo's `+`)
    names_toolchain=re.compile(
        r"(?:^|[\s;&|(])(?:cargo\s+\+(?P<plus>[\w.-]+)"
        r"|rustup\s+(?:toolchain\s+(?:install|add)|default|override\s+set)"
        r"(?:\s+--?[\w-]+(?:[=\s][\w.-]+)?)*\s+(?P<named>[\w.-]+))",
        re.MULTILINE,
    ),
)

# how a warm-up run says it could not set itself up (ci_runner.warmup)
SETUP_FAILURES = (
    ("cargo could not resolve", r"error: failed to select a version for"),
    ("cargo could not resolve", r"error: no matching package named"),
    ("cargo could not fetch", r"error: failed to download"),
    ("cargo could not fetch", r"error: failed to get `[^`]+` as a dependency"),
    ("cargo could not fetch", r"error: failed to load source for dependency"),
    ("cargo could not fetch", r"attempting to make an HTTP request, but --offline was specified"),
    ("a dependency's build script failed", r"error: failed to run custom build command for"),
    ("the Rust toolchain is too old", r"cannot be built because it requires rustc"),
    ("the Rust toolchain is too old", r"error: failed to parse (?:lock file|manifest)"),
    ("the Rust toolchain is too old", r"feature `[^`]+` is required"),
    # the code uses a language or library feature this rustc has not stabilised (let chains
    # before 1.88): every run fails to compile, whatever the patch
    ("the Rust toolchain is too old", r"^error\[E0658\]: "),
)

# `cargo install` during builds: a release the image's rustc supports when the newest does not
CARGO_SHIM = """#!/bin/bash
# arena: cargo as on the task's date (environment builds only)
real=""
here=$(cd "$(dirname "$0")" && pwd -P)
IFS=: read -ra dirs <<< "$PATH"
for d in "${dirs[@]}"; do
  [ "$d" = "$here" ] && continue
  if [ -x "$d/cargo" ]; then real="$d/cargo"; break; fi
done
[ -n "$real" ] || { echo "arena: no cargo on PATH" >&2; exit 127; }
args=("$@")
at=0
[ "${args[0]}" != "${args[0]#+}" ] && at=1
[ "${args[$at]}" = install ] || exec "$real" "$@"
log=$(mktemp)
# its errors shown as they come and kept for the hint below; a pipeline waits for tee (a
# process substitution may not have written the log yet when it is read)
exec 3>&1
"$real" "$@" 2>&1 >&3 3>&- | tee "$log" >&2
rc=${PIPESTATUS[0]}
exec 3>&-
[ $rc -eq 0 ] && exit 0
# cargo's own hint: "`just 1.53.0` supports rustc 1.85.0"
names='s/^`\\([A-Za-z0-9_-]*\\) \\([0-9][^`]*\\)` supports rustc.*/\\1@\\2/p'
supported=$(sed -n "$names" "$log" | head -n1)
[ -n "$supported" ] || exit $rc
name="${supported%@*}"
out=()
for a in "${args[@]}"; do
  if [ "$a" = "$name" ]; then out+=("$supported"); else out+=("$a"); fi
done
# with the lock it was published with: today's versions of its dependencies need today's rustc
case " ${out[*]} " in *" --locked "*) ;; *) out+=(--locked) ;; esac
echo "arena: $name's newest release needs a newer rustc: installing $supported instead" >&2
exec "$real" "${out[@]}"
"""

PROFILE = LanguageProfile(
    name="rust",
    # python3 runs the date-cut index (ci_runner.timemachine_index) during environment builds
    packages=("rustc", "cargo", "python3"),
    official_packages=("python3",),
    suite_setup=SUITE_SETUP,
    official_repository="rust",
    suite_versions=SUITE_VERSIONS,
    request_files=("rust-toolchain", "rust-toolchain.toml", "Cargo.toml", "Cargo.lock"),
    requested_version=requested_version,
    choose_toolchain=choose_toolchain,
    settle_request=settle_request,
    official_version=official_major_minor,
    official_tag=bookworm_tag,
    official_lacks=never,
    relaxations=no_relaxations,
    runtime_env={
        "CARGO_HOME": f"{CACHE_DIR}/cargo",
        "CARGO_TARGET_DIR": f"{CACHE_DIR}/target",
        "CARGO_NET_OFFLINE": "true",
        # a crate without a lock resolves to versions the image's rustc supports
        "CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS": "fallback",
        "PATH": f"{CACHE_DIR}/cargo/bin:{SYSTEM_PATH}",
    },
    offline_only=("CARGO_NET_OFFLINE",),
    dependency_manifest="Cargo.toml",  # a crate (or workspace) with dependencies
    declares_dependencies=lambda text: bool(_DEPENDENCY.search(text) or _WORKSPACE.search(text)),
    runner_words=_RUNNER_WORDS,
    commands=COMMANDS,
    matrix_keys=("rust",),
    report_rule=report_rule,
    build_shims={"cargo": CARGO_SHIM},
    setup_failures=SETUP_FAILURES,
    results=results.RESULTS,
    scope_rules=(scope.SCOPE,),
    typical_image_mb=1030,
    typical_env_layer_mb=1500,
    collect=_COLLECT,
    lock_as_of=_LOCK_AS_OF,
    warm_build_cache=True,
    shares_repository_layer=True,
    tripwires=TripwireForm(
        runner=_RUNNER,
        report_format=ReportFormat.LIBTEST,
        plant=_plant,
        may_fail=_may_fail,
        builds=_BUILDS,
        twins=TwinForm(
            suffixes=(".rs",), make=rust_twins.make_twins, original_of=rust_twins.original_of
        ),
    ),
)
