"""Go releases from the Go module proxy: which release a request means, and how it is fetched.

The proxy serves every Go release as the module `golang.org/toolchain@v0.0.1-go<release>.<os>-
<arch>` (what `GOTOOLCHAIN=go1.22.5` downloads), checked against the checksum database, which
the proxy also serves. A toolchain image fetches one with `go mod download` (any Go can, so
Debian's golang-go is the bootstrap), copies it to /usr/local/go-<release> and links `go` and
`gofmt` into /usr/local/bin, first on every PATH the builds and runs use: offline runs then
have it with nothing more to fetch.
"""

from __future__ import annotations

import re
import shlex

# the last patch release of each minor line as the proxy served it; a request for a minor
# line ("1.21", "1.21.x", as setup-go reads it) gets that line's last patch
GO_LAST_PATCH: dict[tuple[int, int], int] = {
    (1, 13): 15,
    (1, 14): 15,
    (1, 15): 15,
    (1, 16): 15,
    (1, 17): 13,
    (1, 18): 10,
    (1, 19): 13,
    (1, 20): 14,
    (1, 21): 13,
    (1, 22): 12,
    (1, 23): 12,
    (1, 24): 13,
    (1, 25): 14,
    (1, 26): 11,
    (1, 27): 4,
}
# the oldest line whose releases are modules of the proxy worth offering (modules at all)
GO_OLDEST = min(GO_LAST_PATCH)
GO_NEWEST = max(GO_LAST_PATCH)
TOOLCHAIN_MODULE = "golang.org/toolchain"
_RELEASE = re.compile(r"^\s*(?:go)?v?(\d+)\.(\d+)(?:\.(\d+|x|\*))?\s*$")
_CHANNELS = {"stable": GO_NEWEST, "latest": GO_NEWEST, "oldstable": (1, GO_NEWEST[1] - 1)}


def _name(major: int, minor: int, patch: int) -> str:
    # before 1.21 a line's first release is "1.20", not "1.20.0"
    if patch == 0 and (major, minor) < (1, 21):
        return f"{major}.{minor}"
    return f"{major}.{minor}.{patch}"


def go_release(requested: str) -> tuple[str, str | None]:
    """The Go release a request names (the exact one, or its line's last patch), and a note
    when it is not what was asked for (too old for the proxy, unknown, a range)."""
    text = requested.strip().lower()
    for prefix in (">=", "^", "~", "="):
        text = text.removeprefix(prefix).strip()
    if text in _CHANNELS:
        line = _CHANNELS[text]
        return _name(*line, GO_LAST_PATCH[line]), None
    found = _RELEASE.match(text)
    if not found:
        newest = _name(*GO_NEWEST, GO_LAST_PATCH[GO_NEWEST])
        return newest, f"Go {requested!r} is not a release; runs on Go {newest}"
    major, minor = int(found.group(1)), int(found.group(2))
    patch = found.group(3)
    if (major, minor) < GO_OLDEST:
        oldest = _name(*GO_OLDEST, GO_LAST_PATCH[GO_OLDEST])
        return oldest, f"Go {requested} is older than the proxy's releases; runs on Go {oldest}"
    if patch is None or not patch.isdigit():
        last = GO_LAST_PATCH.get((major, minor), 0)  # a line newer than the table: its .0
        return _name(major, minor, last), None
    return _name(major, minor, int(patch)), None


def release_key(release: str) -> tuple[int, int, int]:
    found = _RELEASE.match(release)
    if not found:
        return (0, 0, 0)
    patch = found.group(3)
    return int(found.group(1)), int(found.group(2)), int(patch) if patch and patch.isdigit() else 0


def goroot(release: str) -> str:
    return f"/usr/local/go-{release}"


def fetch_script(release: str, ca_file: str | None = None) -> str:
    """Shell (as root, with network) that fetches `release` from the proxy into its GOROOT,
    links it first on PATH and leaves no download cache (nor `ca_file`) behind."""
    root = shlex.quote(goroot(release))
    module = f"{TOOLCHAIN_MODULE}@v0.0.1-go{release}"
    cleanup = "rm -rf /tmp/arena-gotoolchain /tmp/arena-gotoolchain.json"
    if ca_file:
        cleanup += f" {shlex.quote(ca_file)}"
    return f"""set -eu
trap '{cleanup}' EXIT
export GOMODCACHE=/tmp/arena-gotoolchain GOFLAGS=-modcacherw GOTOOLCHAIN=local GO111MODULE=on
export GOPROXY="${{GOPROXY:-https://proxy.golang.org}}"
cd /tmp
module="{module}.$(go env GOOS)-$(go env GOARCH)"
go mod download -json "$module" > /tmp/arena-gotoolchain.json || true
dir="$(sed -n 's/^[[:space:]]*"Dir": "\\(.*\\)",*$/\\1/p' /tmp/arena-gotoolchain.json)"
if [ -z "$dir" ] || [ ! -f "$dir/bin/go" ]; then cat /tmp/arena-gotoolchain.json >&2; exit 1; fi
rm -rf {root}
cp -a "$dir" {root}
chmod -R a+rX,go-w {root}
# module zips keep no permissions: the go command makes these executable when it switches
chmod a+x {root}/bin/* {root}/pkg/tool/*/*
ln -sf {root}/bin/go /usr/local/bin/go
ln -sf {root}/bin/gofmt /usr/local/bin/gofmt
/usr/local/bin/go version | grep -q "go{re.escape(release)} "
"""
