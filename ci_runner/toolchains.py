"""Which Debian suite's toolchain serves a repo: the version it asks for, or the closest one.

Offline there are no official images, only toolchains packaged by Debian suites. A repo's
requested version (a job's matrix value, `go.mod`'s go line, `rust-toolchain`,
`.python-version`, `requires-python`, `rust-version`) picks the suite; when no suite has it
exactly, the smallest newer version wins (a requested version is usually a minimum), else
the newest older one, and the deviation is written down for the task.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

DEFAULT_SUITE = "bookworm"
# what each suite packages (python3, golang-go, rustc, g++)
SUITE_VERSIONS: dict[str, dict[str, str]] = {
    "bookworm": {"python": "3.11", "go": "1.19", "rust": "1.63", "cpp": "12"},
    "trixie": {"python": "3.13", "go": "1.24", "rust": "1.85", "cpp": "14"},
}
# the files a request is read from, at the base commit
REQUEST_FILES = (
    ".python-version",
    "pyproject.toml",
    "go.mod",
    "rust-toolchain",
    "rust-toolchain.toml",
    "Cargo.toml",
)
_VERSION = re.compile(r"(\d+)(?:\.(\d+))?")


@dataclass(frozen=True)
class ToolchainRequest:
    version: str  # "3.12", "1.21", "stable", ...
    source: str  # where it was read, for the note


@dataclass(frozen=True)
class ToolchainChoice:
    suite: str
    version: str
    notes: tuple[str, ...] = ()


def _major_minor(text: str) -> tuple[int, int] | None:
    found = _VERSION.search(text)
    if not found:
        return None
    return int(found.group(1)), int(found.group(2) or 0)


def _toml(text: str | None) -> dict[str, object]:
    if not text:
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def _table(data: dict[str, object], key: str) -> dict[str, object]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def requested_version(language: str, files: Mapping[str, str]) -> ToolchainRequest | None:
    """The toolchain version a repo asks for in its own files, if any."""
    if language == "go" and "go.mod" in files:
        text = files["go.mod"]
        toolchain = re.search(r"^toolchain\s+go(\S+)", text, re.M)
        line = re.search(r"^go\s+(\S+)", text, re.M)
        if toolchain:
            return ToolchainRequest(toolchain.group(1), "go.mod toolchain line")
        if line:
            return ToolchainRequest(line.group(1), "go.mod go line")
    if language == "rust":
        if files.get("rust-toolchain", "").strip():
            first = files["rust-toolchain"].strip().splitlines()[0].strip()
            if not first.startswith("["):
                return ToolchainRequest(first, "rust-toolchain")
            files = {**files, "rust-toolchain.toml": files["rust-toolchain"]}
        channel = _table(_toml(files.get("rust-toolchain.toml")), "toolchain").get("channel")
        if isinstance(channel, str):
            return ToolchainRequest(channel, "rust-toolchain.toml")
        minimum = _table(_toml(files.get("Cargo.toml")), "package").get("rust-version")
        if isinstance(minimum, str):
            return ToolchainRequest(minimum, "Cargo.toml rust-version")
    if language == "python":
        if files.get(".python-version", "").strip():
            return ToolchainRequest(files[".python-version"].split()[0], ".python-version")
        requires = _table(_toml(files.get("pyproject.toml")), "project").get("requires-python")
        if isinstance(requires, str):
            lower = re.search(r">=?\s*(\d+\.\d+)", requires)
            if lower:
                return ToolchainRequest(lower.group(1), f"requires-python {requires!r}")
    return None


def choose_toolchain(language: str, request: ToolchainRequest | None) -> ToolchainChoice:
    """The suite whose toolchain is the requested one, or the closest; notes say how it differs."""
    available = {suite: versions[language] for suite, versions in SUITE_VERSIONS.items()}
    if request is None:
        return ToolchainChoice(DEFAULT_SUITE, available[DEFAULT_SUITE])
    newest = max(available, key=lambda s: _major_minor(available[s]) or (0, 0))
    wanted = _major_minor(request.version)
    if wanted is None:  # a channel: stable, beta, nightly
        got = available[newest]
        note = f"{request.source} asks for {request.version!r}; the newest packaged is {got}"
        exact = request.version == "stable"
        return ToolchainChoice(newest, got, () if exact else (note,))
    by_version = sorted(available, key=lambda s: _major_minor(available[s]) or (0, 0))
    newer = [s for s in by_version if (_major_minor(available[s]) or (0, 0)) >= wanted]
    suite = newer[0] if newer else by_version[-1]
    got = available[suite]
    if _major_minor(got) == wanted:
        return ToolchainChoice(suite, got)
    return ToolchainChoice(
        suite,
        got,
        (f"{request.source} asks for {language} {request.version}; runs on {got} ({suite})",),
    )


def relaxations(
    language: str, choice: ToolchainChoice, files: Mapping[str, str]
) -> tuple[str, ...]:
    """Constraints of the repo the chosen toolchain does not meet, which the runs ignore."""
    if language != "python":
        return ()
    requires = _table(_toml(files.get("pyproject.toml")), "project").get("requires-python")
    if not isinstance(requires, str):
        return ()
    try:
        allowed = SpecifierSet(requires)
    except InvalidSpecifier:
        return (f"requires-python {requires!r} is not a valid specifier; ignored",)
    if allowed.contains(Version(choice.version), prereleases=True):
        return ()
    return (f"requires-python {requires!r} ignored: runs on Python {choice.version}",)
