"""Which toolchain serves a repo: the version it asks for, or the closest, with the deviation.

Offline there are no official images, only toolchains packaged by Debian suites, plus Go
releases, which the Go module proxy serves as `golang.org/toolchain` modules (what
`GOTOOLCHAIN` downloads). A repo's requested version (a job's matrix value, `go.mod`'s toolchain
or go line, `rust-toolchain`, `.python-version`, `requires-python`, `rust-version`) picks the
suite (Go: the exact release); when no suite has it exactly, the smallest newer version wins (a
requested version is usually a minimum), else the newest older one, and the deviation is
written down for the task. With a registry configured (`ARENA_TOOLCHAIN_REGISTRY`) the official
image of the exact version is the toolchain instead.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from ci_runner.go_toolchain import go_release, release_key

DEFAULT_SUITE = "bookworm"
# what each suite packages (python3, golang-go, rustc, g++); Go's own releases come from the
# module proxy (ci_runner.go_toolchain), Debian's golang-go only bootstraps the download
SUITE_VERSIONS: dict[str, dict[str, str]] = {
    "bookworm": {"python": "3.11", "go": "1.19", "rust": "1.63", "cpp": "12"},
    "trixie": {"python": "3.13", "go": "1.24", "rust": "1.85", "cpp": "14"},
}
NEWEST_SUITE = max(SUITE_VERSIONS, key=lambda suite: Version(SUITE_VERSIONS[suite]["python"]))
# the `clang` package of each suite (a leg that asks for clang-N gets package clang-N)
SUITE_CLANG = {"bookworm": "14", "trixie": "19"}
# the files a request is read from, at the base commit
REQUEST_FILES = (
    ".python-version",
    "pyproject.toml",
    "go.mod",
    "rust-toolchain",
    "rust-toolchain.toml",
    "Cargo.toml",
    "Cargo.lock",
)
_VERSION = re.compile(r"(\d+)(?:\.(\d+))?")
_COMPILER = re.compile(r"^(clang|gcc|g\+\+|llvm)(?:[-@ ]?(\d+))?", re.I)
# official images' repositories, by language, under ARENA_TOOLCHAIN_REGISTRY
OFFICIAL_REPOSITORIES = {"python": "python", "go": "golang", "rust": "rust", "cpp": "gcc"}


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


def _rust_version(files: Mapping[str, str]) -> str | None:
    cargo = _toml(files.get("Cargo.toml"))
    for table in (_table(cargo, "package"), _table(_table(cargo, "workspace"), "package")):
        value = table.get("rust-version")
        if isinstance(value, str):
            return value
    return None


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
        minimum = _rust_version(files)
        if minimum is not None:
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


def rust_floor(files: Mapping[str, str]) -> ToolchainRequest | None:
    """The oldest Rust that can read the repo at all (its Cargo.lock format, its edition)."""
    lock = re.search(r"^version\s*=\s*(\d+)", files.get("Cargo.lock", ""), re.M)
    if lock and int(lock.group(1)) >= 4:
        return ToolchainRequest("1.78", "Cargo.lock version 4")
    if re.search(r"^edition\s*=\s*\"2024\"", files.get("Cargo.toml", ""), re.M):
        return ToolchainRequest("1.85", "edition 2024")
    return None


def _suites(language: str) -> dict[str, str]:
    return {s: versions[language] for s, versions in SUITE_VERSIONS.items() if language in versions}


def _from_suites(language: str, request: ToolchainRequest | None) -> ToolchainChoice:
    available = _suites(language)
    if request is None:
        return ToolchainChoice(DEFAULT_SUITE, available[DEFAULT_SUITE])
    newest = max(available, key=lambda s: _major_minor(available[s]) or (0, 0))
    wanted = _major_minor(request.version)
    if wanted is None:  # a channel: stable, beta, nightly
        got = available[newest]
        note = f"{request.source} asks for {request.version!r}; the newest packaged is {got}"
        if request.version == "stable":
            return ToolchainChoice(newest, got)
        return ToolchainChoice(newest, got, (note,), deviation=note)
    by_version = sorted(available, key=lambda s: _major_minor(available[s]) or (0, 0))
    newer = [s for s in by_version if (_major_minor(available[s]) or (0, 0)) >= wanted]
    suite = newer[0] if newer else by_version[-1]
    got = available[suite]
    if _major_minor(got) == wanted:
        return ToolchainChoice(suite, got)
    note = f"{request.source} asks for {language} {request.version}; runs on {got} ({suite})"
    return ToolchainChoice(suite, got, (note,), deviation=note)


def _go(request: ToolchainRequest | None) -> ToolchainChoice:
    if request is None:  # Debian's own Go, as before
        return _from_suites("go", None)
    release, why = go_release(request.version)
    if why is None:
        return ToolchainChoice(DEFAULT_SUITE, release, go_release=release)
    note = f"{request.source}: {why}"
    return ToolchainChoice(DEFAULT_SUITE, release, (note,), go_release=release, deviation=note)


def _python(request: ToolchainRequest | None) -> ToolchainChoice:
    choice = _from_suites("python", request)
    wanted = _major_minor(request.version) if request else None
    if choice.deviation is None or wanted is None:
        return choice
    asked = f"{wanted[0]}.{wanted[1]}"
    shims = ((f"python{asked}", f"/usr/bin/python{choice.version}"),)
    # tox never skips the interpreter it cannot find (a skip passes with no test run); nox
    # runs its sessions on the interpreter there is
    env = (("TOX_SKIP_MISSING_INTERPRETERS", "false"), ("NOXFORCEPYTHON", choice.version))
    deviation = (
        f"{choice.deviation}: python{asked} there is Python {choice.version}, nox runs on "
        f"{choice.version} (NOXFORCEPYTHON), tox's py{asked.replace('.', '')} environments fail "
        f"for want of Python {asked}"
    )
    return replace(choice, shims=shims, env=env, deviation=deviation)


def _cpp(request: ToolchainRequest | None) -> ToolchainChoice:
    found = _COMPILER.match(request.version.strip()) if request else None
    if request is None or found is None:
        return _from_suites("cpp", request)
    name, major = found.group(1).lower(), found.group(2)
    suite = DEFAULT_SUITE
    if name in ("clang", "llvm"):
        package = f"clang-{major}" if major else "clang"
        suffix = f"-{major}" if major else ""
        version = f"clang {major or SUITE_CLANG[suite]}"
        env = (("CC", f"clang{suffix}"), ("CXX", f"clang++{suffix}"))
        return ToolchainChoice(suite, version, packages=(package,), env=env)
    gcc = SUITE_VERSIONS[suite]["cpp"]
    if major is None or major == gcc:
        return ToolchainChoice(suite, gcc)
    note = f"{request.source} asks for gcc {major}; runs on gcc {gcc} ({suite})"
    return ToolchainChoice(suite, gcc, (note,), deviation=note)


def choose_toolchain(language: str, request: ToolchainRequest | None) -> ToolchainChoice:
    """The toolchain that is the requested one, or the closest; notes say how it differs."""
    if language == "go":
        return _go(request)
    if language == "python":
        return _python(request)
    if language == "cpp":
        return _cpp(request)
    return _from_suites(language, request)


def official_image(language: str, version: str, registry: str) -> str:
    """The official image of `version` under `registry` (python:3.12-bookworm, gcc:13...)."""
    repository = f"{registry.rstrip('/')}/{OFFICIAL_REPOSITORIES[language]}"
    if language == "cpp":
        major = re.search(r"\d+", version)
        return f"{repository}:{major.group(0) if major else 'latest'}"
    return f"{repository}:{version}-bookworm"


def choose_official(
    language: str, request: ToolchainRequest | None, registry: str
) -> ToolchainChoice:
    """With a registry, the official image of the requested version: no deviation to note."""
    if request is None or language not in OFFICIAL_REPOSITORIES:
        version = _suites(language).get(DEFAULT_SUITE, "latest") if request is None else "latest"
    elif language == "go":
        version = go_release(request.version)[0]
    else:
        wanted = _major_minor(request.version)
        version = f"{wanted[0]}.{wanted[1]}" if wanted else "latest"
    if language == "cpp" and request is not None and _COMPILER.match(request.version):
        compiler = choose_toolchain("cpp", request)  # gcc images have no clang: Debian's
        return replace(compiler, image=official_image("cpp", "latest", registry))
    return ToolchainChoice(
        DEFAULT_SUITE, version, image=official_image(language, version, registry)
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


def request_files(read_file: Callable[[str], str | None]) -> dict[str, str]:
    """The REQUEST_FILES a repo has at a commit (`read_file` reads one, None when absent)."""
    return {name: text for name in REQUEST_FILES if (text := read_file(name)) is not None}


def toolchain_choice(
    language: str,
    job_request: str | None,
    files: Mapping[str, str],
    registry: str | None = None,
) -> ToolchainChoice:
    """The whole choice for a task: the job's request outranks the repo's files (read from
    `files`, the REQUEST_FILES at the base commit); a Go job's older release gives way to the
    go.mod's newer one (as GOTOOLCHAIN=auto would switch), a Rust one to what Cargo.lock needs."""
    from_repo = requested_version(language, files)
    request = ToolchainRequest(job_request, "the job") if job_request else from_repo
    notes: tuple[str, ...] = ()
    if language == "go" and request is not None and from_repo is not None:
        job, repo = go_release(request.version)[0], go_release(from_repo.version)[0]
        if release_key(repo) >= (1, 21, 0) and release_key(repo) > release_key(job):
            notes = (
                f"the job asks for Go {job}; {from_repo.source} needs {repo}, which Go "
                "switches to on its own (GOTOOLCHAIN=auto)",
            )
            request = from_repo
    if language == "rust" and (floor := rust_floor(files)) is not None:
        wanted = _major_minor(request.version) if request else (0, 0)
        if wanted is not None and wanted < (_major_minor(floor.version) or (0, 0)):
            notes = (f"{floor.source} needs Rust >= {floor.version}",)
            request = ToolchainRequest(floor.version, floor.source)
    if registry:
        choice = choose_official(language, request, registry)
    else:
        choice = choose_toolchain(language, request)
    extra = relaxations(language, choice, files)
    return replace(choice, notes=notes + choice.notes + extra)
