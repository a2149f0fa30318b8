"""Homebrew lines of a Linux leg become Debian installs of the same libraries."""

from __future__ import annotations

from ci_runner.workflows.brew import brew_as_apt
from ci_runner.workflows.commands import is_install, without_foreign


def test_known_formulae_become_their_debian_packages() -> None:
    apt, unknown = brew_as_apt("brew install boost eigen nlohmann-json msgpack-cxx doctest")
    assert apt == (
        "apt-get install -y --no-install-recommends libboost-dev libeigen3-dev "
        "nlohmann-json3-dev libmsgpack-cxx-dev/trixie doctest-dev"
    )
    assert unknown == ()
    assert is_install(apt)


def test_unknown_formulae_are_named_and_the_rest_installed() -> None:
    kept, dropped = without_foreign("brew install --quiet fmt some/tap/obscure\nmake test")
    assert kept == "apt-get install -y --no-install-recommends libfmt-dev\nmake test"
    assert dropped == ["brew formula some/tap/obscure (no Debian package known)"]


def test_other_brew_and_windows_lines_are_dropped() -> None:
    kept, dropped = without_foreign("brew update\nchoco install ninja\nctest")
    assert kept == "ctest" and dropped == ["brew update", "choco install ninja"]
    assert brew_as_apt("make test") == (None, ())
