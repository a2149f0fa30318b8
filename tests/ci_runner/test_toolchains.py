"""Toolchain choice: the version a repo asks for, or the closest Debian has, with a note."""

from __future__ import annotations

import pytest

from ci_runner.toolchains import (
    ToolchainChoice,
    ToolchainRequest,
    choose_official,
    choose_toolchain,
    official_image,
    relaxations,
    requested_version,
    toolchain_choice,
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
        "bookworm", "1.24.2", go_release="1.24.2"
    )
    assert choose_toolchain("rust", None) == ToolchainChoice("bookworm", "1.63")
    assert choose_toolchain("rust", ToolchainRequest("stable", "rust-toolchain")).notes == ()


def test_the_closest_version_is_taken_and_the_deviation_noted() -> None:
    newer = choose_toolchain("python", ToolchainRequest("3.12", "matrix python-version"))
    assert (newer.suite, newer.version) == ("trixie", "3.13")
    assert newer.notes == ("matrix python-version asks for python 3.12; runs on 3.13 (trixie)",)
    assert newer.deviation is not None and newer.deviation.startswith(newer.notes[0])
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


RAFT_GO_MOD = "module github.com/hashicorp/raft\n\ngo 1.20\n"


@pytest.mark.parametrize(
    ("language", "job", "files", "expected"),
    [
        # Go: the exact release from the module proxy; a line gets its last patch
        ("go", "1.19", {"go.mod": RAFT_GO_MOD}, ("bookworm", "1.19.13", "1.19.13", None)),
        ("go", "1.20", {"go.mod": RAFT_GO_MOD}, ("bookworm", "1.20.14", "1.20.14", None)),
        ("go", None, {"go.mod": RAFT_GO_MOD}, ("bookworm", "1.20.14", "1.20.14", None)),
        (
            "go",
            None,
            {"go.mod": "module m\n\ngo 1.21\ntoolchain go1.22.5\n"},
            ("bookworm", "1.22.5", "1.22.5", None),
        ),
        ("go", None, {}, ("bookworm", "1.19", None, None)),  # nothing asked: Debian's Go
        # Python: Debian's nearest, newer first; the deviation is one line
        ("python", "3.11", {}, ("bookworm", "3.11", None, None)),
        ("python", "3.10", {}, ("bookworm", "3.11", None, "the job asks for python 3.10")),
        ("python", "3.12", {}, ("trixie", "3.13", None, "the job asks for python 3.12")),
        ("python", "3.8", {}, ("bookworm", "3.11", None, "the job asks for python 3.8")),
        # Rust: rust-toolchain(.toml), rust-version (also the workspace's), Cargo.lock's floor
        (
            "rust",
            None,
            {"rust-toolchain.toml": '[toolchain]\nchannel = "stable"\n'},
            ("trixie", "1.85", None, None),
        ),
        (
            "rust",
            None,
            {"Cargo.toml": '[workspace.package]\nrust-version = "1.70"\n'},
            ("trixie", "1.85", None, "Cargo.toml rust-version asks for rust 1.70"),
        ),
        (
            "rust",
            "1.60",
            {"Cargo.lock": "# generated\nversion = 4\n"},
            ("trixie", "1.85", None, "Cargo.lock version 4 asks for rust 1.78"),
        ),
        # C++: the leg's compiler
        ("cpp", None, {}, ("bookworm", "12", None, None)),
        ("cpp", "clang", {}, ("bookworm", "clang 14", None, None)),
        ("cpp", "clang-15", {}, ("bookworm", "clang 15", None, None)),
        ("cpp", "gcc-13", {}, ("bookworm", "12", None, "the job asks for gcc 13")),
    ],
)
def test_toolchain_choice_table(
    language: str,
    job: str | None,
    files: dict[str, str],
    expected: tuple[str, str, str | None, str | None],
) -> None:
    choice = toolchain_choice(language, job, files)
    suite, version, release, deviation = expected
    assert (choice.suite, choice.version, choice.go_release) == (suite, version, release)
    if deviation is None:
        assert choice.deviation is None
    else:
        assert choice.deviation is not None and choice.deviation.startswith(deviation)


def test_a_go_job_older_than_its_go_mod_switches_as_gotoolchain_auto_would() -> None:
    files = {"go.mod": "module m\n\ngo 1.22.3\n"}
    choice = toolchain_choice("go", "1.21", files)
    assert choice.go_release == "1.22.3"
    assert "GOTOOLCHAIN=auto" in choice.notes[0]
    # before 1.21 the go line was advisory: the job's older Go stays
    assert toolchain_choice("go", "1.19", {"go.mod": RAFT_GO_MOD}).go_release == "1.19.13"


def test_a_python_deviation_gives_a_shim_and_never_a_silent_skip() -> None:
    choice = toolchain_choice("python", "3.12", {})
    assert choice.shims == (("python3.12", "/usr/bin/python3.13"),)
    assert choice.environment == {
        "TOX_SKIP_MISSING_INTERPRETERS": "false",
        "NOXFORCEPYTHON": "3.13",
    }
    assert choice.deviation is not None and "tox's py312 environments fail" in choice.deviation
    exact = toolchain_choice("python", "3.11", {})
    assert not exact.adds_to_suite  # the suite's plain python image, shared


def test_a_clang_leg_adds_the_package_and_the_compiler_variables() -> None:
    choice = toolchain_choice("cpp", "clang-15", {})
    assert choice.packages == ("clang-15", "libclang-rt-15-dev")
    assert choice.environment == {"CC": "clang-15", "CXX": "clang++-15"}


@pytest.mark.parametrize(
    ("language", "job", "image"),
    [
        ("python", "3.12", "mirror.example/python:3.12-bookworm"),
        ("go", "1.22", "mirror.example/golang:1.22.12-bookworm"),
        ("rust", "1.79.0", "mirror.example/rust:1.79-bookworm"),
        ("cpp", "13", "mirror.example/gcc:13"),
    ],
)
def test_a_registry_gives_the_official_image_of_the_exact_version(
    language: str, job: str, image: str
) -> None:
    choice = toolchain_choice(language, job, {}, registry="mirror.example/")
    assert choice.image == image and choice.deviation is None and not choice.notes


def test_official_names_without_a_request_are_debians_versions() -> None:
    assert choose_official("python", None, "r").image == "r/python:3.11-bookworm"
    assert official_image("cpp", "gcc 14", "r") == "r/gcc:14"


def test_a_rust_job_naming_no_version_runs_on_the_newest_packaged_rust() -> None:
    """As on GitHub's runner, whose own Rust is the stable of the day; never bookworm's 1.63,
    whose cargo reads crates.io only through a git index on GitHub."""
    choice = toolchain_choice("rust", None, {"Cargo.toml": '[package]\nname = "a"\n'})
    assert (choice.suite, choice.version, choice.deviation) == ("trixie", "1.85", None)
    pinned = toolchain_choice("rust", None, {"rust-toolchain": "1.63\n"})
    assert (pinned.suite, pinned.version) == ("bookworm", "1.63")
