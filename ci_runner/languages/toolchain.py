"""A toolchain request and choice, and the suite-matching rule the language profiles share.

Kept apart from `ci_runner.toolchains` (which asks the profiles) so that a profile can build
its own choice from these without importing the module that dispatches to it.
"""

from __future__ import annotations

import base64
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass

DEFAULT_SUITE = "bookworm"
_VERSION = re.compile(r"(\d+)(?:\.(\d+))?")


@dataclass(frozen=True)
class ToolchainRequest:
    version: str  # "3.12", "1.21", "stable", "clang", ...
    source: str  # where it was read, for the note


@dataclass(frozen=True)
class ToolchainChoice:
    """The toolchain a task's images are built with, and how it differs from the request.

    `suite` and `version` as before; the rest says what the toolchain image adds to the
    suite's language image: `go_release` is fetched from the Go module proxy and put first on
    PATH, `packages` are more Debian packages (clang), `shims` are (name, target) symlinks in
    /usr/local/bin (`python3.12` -> the interpreter chosen), `env` is set for the build and
    every run, `image` is an official image to start from instead of the Debian suite.
    `deviation` is one line naming how the toolchain differs from the request, for a
    validation reason to cite when the deviation is the cause of a failure.
    """

    suite: str
    version: str
    notes: tuple[str, ...] = ()
    go_release: str | None = None
    packages: tuple[str, ...] = ()
    shims: tuple[tuple[str, str], ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    image: str | None = None
    deviation: str | None = None

    @property
    def environment(self) -> dict[str, str]:
        return dict(self.env)

    @property
    def adds_to_suite(self) -> bool:
        """Whether the toolchain image is more than the suite's plain language image."""
        return bool(self.go_release or self.packages or self.shims or self.env or self.image)


def major_minor(text: str) -> tuple[int, int] | None:
    found = _VERSION.search(text)
    if not found:
        return None
    return int(found.group(1)), int(found.group(2) or 0)


def toml(text: str | None) -> dict[str, object]:
    if not text:
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def table(data: dict[str, object], key: str) -> dict[str, object]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def from_suites(
    language: str, available: Mapping[str, str], request: ToolchainRequest | None
) -> ToolchainChoice:
    """The suite whose packaged version (`available`: suite -> version) is the request, else
    the smallest newer one (a requested version is usually a minimum), else the newest."""
    if request is None:
        return ToolchainChoice(DEFAULT_SUITE, available[DEFAULT_SUITE])
    newest = max(available, key=lambda s: major_minor(available[s]) or (0, 0))
    wanted = major_minor(request.version)
    if wanted is None:  # a channel: stable, beta, nightly
        got = available[newest]
        note = f"{request.source} asks for {request.version!r}; the newest packaged is {got}"
        if request.version == "stable":
            return ToolchainChoice(newest, got)
        return ToolchainChoice(newest, got, (note,), deviation=note)
    by_version = sorted(available, key=lambda s: major_minor(available[s]) or (0, 0))
    newer = [s for s in by_version if (major_minor(available[s]) or (0, 0)) >= wanted]
    suite = newer[0] if newer else by_version[-1]
    got = available[suite]
    if major_minor(got) == wanted:
        return ToolchainChoice(suite, got)
    note = f"{request.source} asks for {language} {request.version}; runs on {got} ({suite})"
    return ToolchainChoice(suite, got, (note,), deviation=note)


def no_request(files: Mapping[str, str]) -> ToolchainRequest | None:
    """For a language whose repos name no version in their own files."""
    return None


def request_as_asked(
    request: ToolchainRequest | None, from_repo: ToolchainRequest | None, files: Mapping[str, str]
) -> tuple[ToolchainRequest | None, tuple[str, ...]]:
    """For a language whose job's request always outranks the repo's files."""
    return request, ()


def no_relaxations(choice: ToolchainChoice, files: Mapping[str, str]) -> tuple[str, ...]:
    return ()


def official_major_minor(request: ToolchainRequest) -> str:
    wanted = major_minor(request.version)
    return f"{wanted[0]}.{wanted[1]}" if wanted else "latest"


def bookworm_tag(version: str) -> str:
    return f"{version}-bookworm"


def never(request: ToolchainRequest) -> bool:
    return False


def installed_file(path: str, text: str) -> str:
    """The Dockerfile line that writes `text` to `path`, executable (an image's shim)."""
    encoded = base64.b64encode(text.encode()).decode()
    return f"RUN echo {encoded} | base64 -d > {path} && chmod 755 {path}\n"
