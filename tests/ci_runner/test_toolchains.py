"""Toolchain choice: the version a repo asks for, or the closest Debian has, with a note."""

from __future__ import annotations

from ci_runner.toolchains import (
    ToolchainChoice,
    ToolchainRequest,
    choose_toolchain,
    relaxations,
    requested_version,
)


def test_requests_are_read_from_the_repos_own_files() -> None:
    go = requested_version("go", {"go.mod": "module m\n\ngo 1.21\n"})
    assert go == ToolchainRequest("1.21", "go.mod go line")
    toolchain = requested_version("go", {"go.mod": "module m\n\ngo 1.21\ntoolchain go1.22.3\n"})
    assert toolchain is not None and toolchain.version == "1.22.3"
    plain = requested_version("rust", {"rust-toolchain": "1.70.0\n"})
    assert plain == ToolchainRequest("1.70.0", "rust-toolchain")
    toml = requested_version("rust", {"rust-toolchain.toml": '[toolchain]\nchannel = "stable"\n'})
    assert toml == ToolchainRequest("stable", "rust-toolchain.toml")
    msrv = requested_version(
        "rust", {"Cargo.toml": '[package]\nname = "x"\nrust-version = "1.60"\n'}
    )
    assert msrv == ToolchainRequest("1.60", "Cargo.toml rust-version")
    pinned = requested_version("python", {".python-version": "3.12.1\n"})
    assert pinned == ToolchainRequest("3.12.1", ".python-version")
    minimum = requested_version(
        "python", {"pyproject.toml": '[project]\nrequires-python = ">=3.9"\n'}
    )
    assert minimum == ToolchainRequest("3.9", "requires-python '>=3.9'")
    assert requested_version("cpp", {"go.mod": "go 1.21\n"}) is None
    assert requested_version("python", {"pyproject.toml": "not toml ["}) is None


def test_an_exact_version_has_no_note() -> None:
    assert choose_toolchain("python", ToolchainRequest("3.11", "matrix")) == ToolchainChoice(
        "bookworm", "3.11"
    )
    assert choose_toolchain("go", ToolchainRequest("1.24.2", "go.mod")) == ToolchainChoice(
        "trixie", "1.24"
    )
    assert choose_toolchain("rust", None) == ToolchainChoice("bookworm", "1.63")
    assert choose_toolchain("rust", ToolchainRequest("stable", "rust-toolchain")).notes == ()


def test_the_closest_version_is_taken_and_the_deviation_noted() -> None:
    newer = choose_toolchain("python", ToolchainRequest("3.12", "matrix python-version"))
    assert (newer.suite, newer.version) == ("trixie", "3.13")
    assert newer.notes == ("matrix python-version asks for python 3.12; runs on 3.13 (trixie)",)
    go = choose_toolchain("go", ToolchainRequest("1.21", "go.mod go line"))
    assert (go.suite, go.version) == ("trixie", "1.24") and go.notes
    older = choose_toolchain("python", ToolchainRequest("3.8", "matrix python-version"))
    assert (older.suite, older.version) == ("bookworm", "3.11") and older.notes
    beyond = choose_toolchain("rust", ToolchainRequest("1.90", "rust-toolchain"))
    assert (beyond.suite, beyond.version) == ("trixie", "1.85") and beyond.notes
    nightly = choose_toolchain("rust", ToolchainRequest("nightly", "rust-toolchain"))
    assert nightly.suite == "trixie" and "nightly" in nightly.notes[0]


def test_a_requires_python_the_toolchain_misses_is_a_recorded_relaxation() -> None:
    files = {"pyproject.toml": '[project]\nrequires-python = ">=3.7,<3.11"\n'}
    choice = choose_toolchain("python", requested_version("python", files))
    assert choice.version == "3.11"
    assert relaxations("python", choice, files) == (
        "requires-python '>=3.7,<3.11' ignored: runs on Python 3.11",
    )
    met = {"pyproject.toml": '[project]\nrequires-python = ">=3.9"\n'}
    assert relaxations("python", choose_toolchain("python", None), met) == ()
