"""What setup steps assume of GitHub's Ubuntu runner, given to environment builds only.

Shims placed first on PATH in the build container (on a tmpfs the image leaves out):
- `sudo` runs the command (the build already runs as root);
- `apt-get` and `apt` fetch the package lists before the first install, answer yes (a step's
  `apt-get install gcc-multilib` without `-y` would stop at "Do you want to continue?"),
  and map an Ubuntu package name that Debian lacks to Debian's (`UBUNTU_TO_DEBIAN`);
- `APT_CONFIG` and `DEBIAN_FRONTEND` keep dpkg from asking anything;
- `cargo install NAME` (no version), whose newest release needs a newer rustc than the
  image's, installs the newest release that supports it, the one cargo itself names (on the
  task's date the runner's stable rustc was that old too; crates.io's index has no dates).
And the runner's preinstalled tools (`RUNNER_TOOLS`: curl, make, jq, ...) are installed
lazily, before a step that calls one the image lacks, so an image carries only what its
steps use. The dataset's steps are never edited.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ci_runner.languages import find_profile, profiles

SHIM_DIR = "/mnt/bin"  # BUILD_MOUNT/bin of ci_runner.environments
APT_CONFIG_FILE = "/mnt/apt.conf"
APT_MAP_FILE = "/mnt/apt-map"

SUDO_SHIM = """#!/bin/sh
# arena: `sudo` in a setup step; the build already runs as root
while [ $# -gt 0 ]; do
  case "$1" in
    -u|-g|-p|-C|-D|-h|-r|-t|-T|-U) shift 2 ;;
    --) shift; break ;;
    -*) shift ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || exit 0
exec "$@"
"""

APT_CONFIG = """APT::Get::Assume-Yes "true";
APT::Color "false";
Dpkg::Options { "--force-confdef"; "--force-confold"; };
Dpkg::Use-Pty "false";
"""

# Ubuntu names (regular expressions, POSIX ERE and Python alike) that Debian spells
# otherwise, applied only to a name Debian has no installable candidate for; \\1 is the group
UBUNTU_TO_DEBIAN: tuple[tuple[str, str], ...] = (
    ("^netcat$", "netcat-openbsd"),
    ("^libgl1-mesa-glx$", "libgl1"),
    ("^qt5-default$", "qtbase5-dev qtbase5-dev-tools"),
    ("^libmysqlclient-dev$", "default-libmysqlclient-dev"),
    ("^mysql-(client|server)$", "default-mysql-\\1"),
    ("^chromium-browser$", "chromium"),
    ("^firefox$", "firefox-esr"),
    ("^libncursesw?5-dev$", "libncurses-dev"),
    ("^libncurses5$", "libncurses6"),
    ("^libtinfo5$", "libtinfo6"),
    ("^python$", "python-is-python3"),
    ("^python-(dev|pip|venv)$", "python3-\\1"),
    ("^libpython-dev$", "libpython3-dev"),
    ("^libssl1\\.[01]$", "libssl3"),
    ("^libffi7$", "libffi8"),
    ("^libjpeg-turbo8(-dev)?$", "libjpeg62-turbo\\1"),
    ("^libjpeg8-dev$", "libjpeg-dev"),
    ("^libpng12-dev$", "libpng-dev"),
    ("^libtiff5-dev$", "libtiff-dev"),
    ("^libappindicator3-dev$", "libayatana-appindicator3-dev"),
    # versioned toolchains Debian's suite does not carry: its own version instead
    ("^(gcc|g\\+\\+)-[0-9]+-multilib$", "\\1-multilib"),
    ("^(gcc|g\\+\\+|cpp|gfortran|clang|clang-format|clang-tidy|lld|lldb|llvm)-[0-9.]+$", "\\1"),
    ("^(llvm|libclang|libomp)-[0-9]+-dev$", "\\1-dev"),
    ("^openjdk-[0-9]+-(jdk|jre)(-headless)?$", "default-\\1\\2"),
    ("^python3\\.[0-9]+(-dev|-venv|-distutils)?$", "python3\\1"),
    ("^libboost[0-9.]+-(.+)$", "libboost-\\1"),
    ("^postgresql-client-[0-9]+$", "postgresql-client"),
)

# commands the job assumes because the runner has them, and the Debian package of each
RUNNER_TOOLS: dict[str, str] = {
    "curl": "curl",
    "wget": "wget",
    "make": "make",
    "gcc": "gcc",
    "cc": "gcc",
    "g++": "g++",
    "c++": "g++",
    # clang 14 on ubuntu-22.04's runner, as in Debian 12, with its sanitizers' runtimes
    "clang": "clang,libclang-rt-dev",
    "clang++": "clang,libclang-rt-dev",
    "unzip": "unzip",
    "zip": "zip",
    "jq": "jq",
    "xz": "xz-utils",
    "file": "file",
    "pkg-config": "pkg-config",
    "rsync": "rsync",
    "patch": "patch",
    "bzip2": "bzip2",
    "zstd": "zstd",
    "gpg": "gnupg",
    "ssh": "openssh-client",
    "lsb_release": "lsb-release",
    "cmake": "cmake",
    "ninja": "ninja-build",
    "autoreconf": "autoconf",
    "automake": "automake",
    "libtoolize": "libtool",
    "bc": "bc",
    "tree": "tree",
    "shellcheck": "shellcheck",
    "python3": "python3",
    "python": "python-is-python3",
    "pip": "python3-pip",
    "pip3": "python3-pip",
    "pipx": "pipx",
    "node": "nodejs",
    "npm": "npm",
    "npx": "npm",
    "ruby": "ruby",
    "gem": "ruby",
    "bundle": "ruby-bundler",
    "xvfb-run": "xvfb",
    "add-apt-repository": "software-properties-common",
    "apt-add-repository": "software-properties-common",
    "sqlite3": "sqlite3",
    "psql": "postgresql-client",
    "mysql": "default-mysql-client",
    "redis-cli": "redis-tools",
    "msgfmt": "gettext",
}


def install_libraries(language: str) -> str | None:
    """The command that installs the libraries GitHub's runner has that a language's packages
    built from source link against (its profile's `runner_libraries`), or None."""
    profile = find_profile(language)
    if profile is None or not profile.runner_libraries:
        return None
    return f"apt-get install -y --no-install-recommends {' '.join(profile.runner_libraries)}"


# a word in command position: at the start of a line or after ; & | ( ` $( , a keyword, or
# a prefix such as a variable's value (`$RETRY`: empty or a retrier), sudo (with its
# options), env (with its assignments) or time
_COMMAND_POSITION = (
    r"(?:^|[;&|(`\n]|\$\()\s*(?:(?:if|then|do|else|elif|while|until|!|time)\s+)*"
    r"(?:\$\{?\w+\}?\s+)*(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+(?:\S+=\S*\s+)*)?(?:\S+=\S*\s+)*"
)


# a compiler named as a value: `CXX=clang++ make`, `cmake -D CMAKE_CXX_COMPILER=clang++`, a
# job's `env: {CC: clang}` (given here as `CC=clang` lines)
_COMPILER_VALUE = r"(?:^|[\s;&|(\"'`])(?:-D\s*)?(?:CMAKE_(?:C|CXX)_COMPILER(?::\w+)?|CC|CXX)=[\"']?"
_COMPILERS = frozenset({"gcc", "cc", "g++", "c++", "clang", "clang++"})
_WORD_END = r"(?=$|[\s;&|)`\"'])"  # a tool's name ends there (a quote closes a value)


def mentioned_tools(script: str, env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The runner tools `script` calls as commands, or names as its C or C++ compiler (there
    or in `env`), in table order."""
    text = "\n".join([script, *(f"{k}={v}" for k, v in (env or {}).items())])
    found = []
    for command in RUNNER_TOOLS:
        pattern = _COMMAND_POSITION + re.escape(command) + _WORD_END
        if command in _COMPILERS:
            pattern = f"(?:{pattern}|{_COMPILER_VALUE}{re.escape(command)}{_WORD_END})"
        if re.search(pattern, text, flags=re.MULTILINE):
            found.append(command)
    return tuple(found)


def install_missing(commands: tuple[str, ...]) -> str:
    """A shell command that installs the packages of those of `commands` the image lacks
    (a tool's packages are separated by commas in `RUNNER_TOOLS`)."""
    checks = " ".join(f"{command}:{RUNNER_TOOLS[command]}" for command in commands)
    return f"""missing=""
for pair in {checks}; do
  packages=${{pair#*:}}
  command -v "${{pair%%:*}}" >/dev/null 2>&1 || missing="$missing ${{packages//,/ }}"
done
[ -n "$missing" ] || exit 0
echo "arena: installing what GitHub's runner has and this image lacks:$missing"
apt-get install -y --no-install-recommends $missing"""


@dataclass(frozen=True)
class Mapped:
    """An Ubuntu package name and what a Debian build installs for it."""

    ubuntu: str
    debian: tuple[str, ...]


def debian_names(name: str, installable: Callable[[str], bool]) -> Mapped:
    """What the apt shim installs for the argument `name`: itself when Debian has it (or it
    pins a version or release), else the first mapping whose pattern matches, else itself
    (apt then says it cannot locate it). The shim does the same in bash."""
    base, arch_sep, arch = name.partition(":")
    if "=" in name or "/" in name or installable(base):
        return Mapped(name, (name,))
    for pattern, replacement in UBUNTU_TO_DEBIAN:
        match = re.search(pattern, base)
        if match:
            spelled = replacement
            for number, group in enumerate(match.groups(), start=1):
                spelled = spelled.replace(f"\\{number}", group or "")
            return Mapped(name, tuple(f"{n}{arch_sep}{arch}" for n in spelled.split()))
    return Mapped(name, (name,))


def apt_map() -> str:
    """The mapping table as the shim reads it: a pattern and its replacement per line."""
    return "".join(f"{pattern}\t{replacement}\n" for pattern, replacement in UBUNTU_TO_DEBIAN)


# `apt-get` and `apt` during builds: lists first, yes to every question, Debian's names
APT_SHIM = f"""#!/bin/bash
# arena: apt as on GitHub's Ubuntu runner (environment builds only)
real="/usr/bin/${{0##*/}}"
args=("$@")
at=-1
for ((i = 0; i < ${{#args[@]}}; i++)); do
  case "${{args[$i]}}" in
    -o|-t|-c|--option|--target-release|--config-file) i=$((i + 1)) ;;
    -*) ;;
    *) at=$i; break ;;
  esac
done
[ "$at" -ge 0 ] || exec "$real" "$@"
case "${{args[$at]}}" in
  install|reinstall|build-dep|source|satisfy) ;;
  *) exec "$real" "$@" ;;
esac
# a package asked for from another Debian suite (libfoo-dev/trixie): that suite's lists,
# pinned below the image's own so that nothing else is taken from it
refresh=0
for ((i = at + 1; i < ${{#args[@]}}; i++)); do
  suite="${{args[$i]##*/}}"
  case "${{args[$i]}}" in -*|*=*|*:*) continue ;; */*) ;; *) continue ;; esac
  [[ $suite =~ ^[a-z]+$ ]] || continue
  [ -e "/etc/apt/sources.list.d/arena-$suite.list" ] && continue
  grep -qs "^deb .* $suite main" /etc/apt/sources.list /etc/apt/sources.list.d/*.list && continue
  mirror=$(sed -n 's/^deb \\([^ ]*\\) [a-z]* main.*/\\1/p' /etc/apt/sources.list | head -n1)
  list="/etc/apt/sources.list.d/arena-$suite.list"
  echo "deb ${{mirror:-http://deb.debian.org/debian}} $suite main" > "$list"
  pin='Package: *\\nPin: release n=%s\\nPin-Priority: 100\\n'
  printf "$pin" "$suite" > "/etc/apt/preferences.d/arena-$suite"
  echo "arena: $suite's packages listed too, for ${{args[$i]}} only" >&2
  refresh=1
done
if [ $refresh = 1 ]; then
  /usr/bin/apt-get update -q || exit $?
elif ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; then
  echo "arena: no package lists yet: apt-get update first" >&2
  /usr/bin/apt-get update -q || exit $?
fi
installable() {{ apt-cache policy "$1" 2>/dev/null | grep -q 'Candidate: [^(]'; }}
debian_names() {{
  local name="$1" base="${{1%%:*}}" arch="" pattern replacement spelled k
  [ "$base" = "$name" ] || arch=":${{name#*:}}"
  case "$name" in *=*|*/*) echo "$name"; return ;; esac
  if installable "$base"; then echo "$name"; return; fi
  while IFS=$'\\t' read -r pattern replacement; do
    if [[ $base =~ $pattern ]]; then
      spelled="$replacement"
      for k in 1 2 3; do spelled="${{spelled//\\\\$k/${{BASH_REMATCH[$k]}}}}"; done
      echo "arena: Ubuntu's $name is $spelled on Debian" >&2
      for k in $spelled; do echo "$k$arch"; done
      return
    fi
  done < {APT_MAP_FILE}
  echo "$name"
}}
out=("${{args[@]:0:$((at + 1))}}")
for ((i = at + 1; i < ${{#args[@]}}; i++)); do
  a="${{args[$i]}}"
  case "$a" in
    -o|-t|-c|--option|--target-release|--config-file)
      out+=("$a" "${{args[$((i + 1))]}}"); i=$((i + 1)) ;;
    -*) out+=("$a") ;;
    *) while read -r n; do out+=("$n"); done < <(debian_names "$a") ;;
  esac
done
exec "$real" -y "${{out[@]}}"
"""


def shim_files() -> dict[str, tuple[bytes, int]]:
    """The files a build container gets before its first setup step: path -> (data, mode)."""
    return {
        f"{SHIM_DIR}/sudo": (SUDO_SHIM.encode(), 0o755),
        f"{SHIM_DIR}/apt-get": (APT_SHIM.encode(), 0o755),
        f"{SHIM_DIR}/apt": (APT_SHIM.encode(), 0o755),
        APT_CONFIG_FILE: (APT_CONFIG.encode(), 0o644),
        APT_MAP_FILE: (apt_map().encode(), 0o644),
        **{
            f"{SHIM_DIR}/{name}": (text.encode(), 0o755)
            for profile in profiles()
            for name, text in profile.build_shims.items()
        },
    }


def build_env() -> dict[str, str]:
    """Variables of every setup step: no question from apt or dpkg, the shims' config,
    pipx's tools on PATH."""
    return {
        "DEBIAN_FRONTEND": "noninteractive",
        "APT_CONFIG": APT_CONFIG_FILE,
        # `pipx install poetry` puts it on PATH as on the runner (its /opt/pipx_bin), in
        # the image, for every CI run
        "PIPX_HOME": "/opt/pipx",
        "PIPX_BIN_DIR": "/usr/local/bin",
        # a `pip install` outside a virtualenv installs, as on the runner: Debian marks its
        # Python externally managed (PEP 668), which fails a Go or C++ job's `pip install`
        "PIP_BREAK_SYSTEM_PACKAGES": "1",
    }
