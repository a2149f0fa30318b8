"""Which toolchain serves a repo: the version it asks for, or the closest, with the deviation.

Offline there are no official images, only toolchains packaged by Debian suites, plus Go
releases, which the Go module proxy serves as `golang.org/toolchain` modules (what
`GOTOOLCHAIN` downloads). A repo's requested version (a job's matrix value, `go.mod`'s toolchain
or go line, `rust-toolchain`, `.python-version`, `requires-python`, `rust-version`) picks the
suite (Go: the exact release); when no suite has it exactly, the smallest newer version wins (a
requested version is usually a minimum), else the newest older one, and the deviation is
written down for the task. With a registry configured (`ARENA_TOOLCHAIN_REGISTRY`) the official
image of the exact version is the toolchain instead.

What a language asks for and how its choice is made are its profile's (`ci_runner.languages`);
this module applies them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from ci_runner.languages import profile_of, profiles
from ci_runner.languages.toolchain import (
    DEFAULT_SUITE,
    ToolchainChoice,
    ToolchainRequest,
)

__all__ = [
    "DEFAULT_SUITE",
    "NEWEST_SUITE",
    "SUITES",
    "ToolchainChoice",
    "ToolchainRequest",
    "choose_official",
    "choose_toolchain",
    "official_image",
    "relaxations",
    "request_files",
    "requested_version",
    "toolchain_choice",
]

# the Debian suites whose packages serve toolchains, oldest first; what each packages of a
# language is its profile's `suite_versions`; Go's own releases come from the module proxy
# (ci_runner.go_toolchain), Debian's golang-go only bootstraps the download
SUITES = ("bookworm", "trixie")
NEWEST_SUITE = SUITES[-1]


def requested_version(language: str, files: Mapping[str, str]) -> ToolchainRequest | None:
    """The toolchain version a repo asks for in its own files, if any."""
    return profile_of(language).requested_version(files)


def choose_toolchain(language: str, request: ToolchainRequest | None) -> ToolchainChoice:
    """The toolchain that is the requested one, or the closest; notes say how it differs."""
    return profile_of(language).choose_toolchain(request)


def official_image(language: str, version: str, registry: str) -> str:
    """The official image of `version` under `registry` (python:3.12-bookworm, gcc:13...)."""
    profile = profile_of(language)
    return f"{registry.rstrip('/')}/{profile.official_repository}:{profile.official_tag(version)}"


def choose_official(
    language: str, request: ToolchainRequest | None, registry: str
) -> ToolchainChoice:
    """With a registry, the official image of the requested version: no deviation to note."""
    profile = profile_of(language)
    if request is None:
        version = profile.suite_versions.get(DEFAULT_SUITE, "latest")
    else:
        version = profile.official_version(request)
    if request is not None and profile.official_lacks(request):
        return replace(
            profile.choose_toolchain(request), image=official_image(language, "latest", registry)
        )
    return ToolchainChoice(
        DEFAULT_SUITE, version, image=official_image(language, version, registry)
    )


def relaxations(
    language: str, choice: ToolchainChoice, files: Mapping[str, str]
) -> tuple[str, ...]:
    """Constraints of the repo the chosen toolchain does not meet, which the runs ignore."""
    return profile_of(language).relaxations(choice, files)


def request_files(read_file: Callable[[str], str | None]) -> dict[str, str]:
    """The files any language reads a requested version from (its profile's
    `request_files`) that a repo has at a commit (`read_file` reads one, None: absent)."""
    names = dict.fromkeys(name for p in profiles() for name in p.request_files)
    return {name: text for name in names if (text := read_file(name)) is not None}


def toolchain_choice(
    language: str,
    job_request: str | None,
    files: Mapping[str, str],
    registry: str | None = None,
) -> ToolchainChoice:
    """The whole choice for a task: the job's request outranks the repo's files (read from
    `files`, the `request_files` at the base commit); a Go job's older release gives way to the
    go.mod's newer one (as GOTOOLCHAIN=auto would switch), a Rust one to what Cargo.lock needs."""
    from_repo = requested_version(language, files)
    request = ToolchainRequest(job_request, "the job") if job_request else from_repo
    request, notes = profile_of(language).settle_request(request, from_repo, files)
    if registry:
        choice = choose_official(language, request, registry)
    else:
        choice = choose_toolchain(language, request)
    extra = relaxations(language, choice, files)
    return replace(choice, notes=notes + choice.notes + extra)
