"""Homebrew installs on a Linux leg, as the Debian packages that give the same libraries.

GitHub's Ubuntu runner carries Homebrew (linuxbrew), and C++ jobs use it for libraries
Ubuntu packages too old (`brew install boost eigen nlohmann-json doctest`). No Homebrew
bottle can be fetched here, but Debian packages nearly every such formula: a `brew install`
line of a Linux leg becomes an `apt-get install` of the known equivalents, and a formula
without one is named in the task's notes (the build then fails where it needs it).
"""

from __future__ import annotations

import re

from ci_runner.toolchains import NEWEST_SUITE

# formula -> Debian packages (bookworm names); tools keep their names where Debian's match
BREW_TO_DEBIAN: dict[str, tuple[str, ...]] = {
    "boost": ("libboost-dev",),
    "eigen": ("libeigen3-dev",),
    "nlohmann-json": ("nlohmann-json3-dev",),
    # Homebrew's msgpack-cxx is 6 or later, whose CMake package is `msgpack-cxx`; bookworm's
    # 4.1 calls it msgpackc-cxx, so find_package(msgpack-cxx) needs the newer suite's headers
    "msgpack-cxx": (f"libmsgpack-cxx-dev/{NEWEST_SUITE}",),
    "msgpack": ("libmsgpack-dev",),
    "doctest": ("doctest-dev",),
    "catch2": ("catch2",),
    "googletest": ("libgtest-dev", "libgmock-dev"),
    "fmt": ("libfmt-dev",),
    "spdlog": ("libspdlog-dev",),
    "yaml-cpp": ("libyaml-cpp-dev",),
    "protobuf": ("libprotobuf-dev", "protobuf-compiler"),
    "gflags": ("libgflags-dev",),
    "glog": ("libgoogle-glog-dev",),
    "tbb": ("libtbb-dev",),
    "hdf5": ("libhdf5-dev",),
    "openssl": ("libssl-dev",),
    "openssl@3": ("libssl-dev",),
    "zlib": ("zlib1g-dev",),
    "sqlite": ("libsqlite3-dev",),
    "curl": ("curl", "libcurl4-openssl-dev"),
    "libomp": ("libomp-dev",),
    "llvm": ("llvm-dev", "clang"),
    "cmake": ("cmake",),
    "ninja": ("ninja-build",),
    "pkg-config": ("pkg-config",),
    "pkgconf": ("pkgconf",),
    "autoconf": ("autoconf",),
    "automake": ("automake",),
    "libtool": ("libtool",),
    "gettext": ("gettext",),
    "ccache": ("ccache",),
    "lcov": ("lcov",),
    "gcovr": ("gcovr",),
    "jq": ("jq",),
    "zsh": ("zsh",),
    "fish": ("fish",),
    "tmux": ("tmux",),
    "bash": ("bash",),
    "coreutils": ("coreutils",),
    "gnu-sed": ("sed",),
    "make": ("make",),
}
_BREW_INSTALL = re.compile(
    r"^\s*(?:sudo\s+)?brew\s+install\s+(?P<args>[^;&|`$()<>]*?)\s*$", re.IGNORECASE
)


def brew_as_apt(line: str) -> tuple[str | None, tuple[str, ...]]:
    """(`apt-get install` of the Debian equivalents or None, formulae without one) for a
    `brew install ...` line; (None, ()) for any other line."""
    found = _BREW_INSTALL.match(line)
    if found is None:
        return None, ()
    formulae = [a for a in found["args"].split() if not a.startswith("-")]
    packages: list[str] = []
    unknown: list[str] = []
    for formula in formulae:
        name = formula.rsplit("/", 1)[-1]  # tap/formula
        mapped = BREW_TO_DEBIAN.get(name) or BREW_TO_DEBIAN.get(name.split("@", 1)[0])
        if mapped is None:
            unknown.append(formula)
        else:
            packages.extend(p for p in mapped if p not in packages)
    if not packages:
        return None, tuple(unknown)
    return f"apt-get install -y --no-install-recommends {' '.join(packages)}", tuple(unknown)
