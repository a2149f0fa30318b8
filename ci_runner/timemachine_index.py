"""A PyPI simple index and a crates.io sparse index as they were at a cutoff date: the
date-cut index of environment builds.

Standard library only, so that it runs inside any build container that has a python3 (it is
copied there and started by `ci_runner.package_dates`): `python3 timemachine_index.py CUTOFF
UPSTREAM PORT_FILE [CRATES_UPSTREAM]` serves on a free port of 127.0.0.1, written to
PORT_FILE:

- `/simple/<project>/`: the upstream's PEP 691 JSON page less every file uploaded after
  CUTOFF, answered as JSON (PEP 691) or HTML (PEP 503) as the client asks; the files
  themselves are still fetched from where the upstream says (their URLs are absolute). pip,
  uv and the pip of every tox or nox virtualenv see only what had been released by then.
- `/crates/...`: the crates.io sparse index (Cargo's registry protocol), each crate's file
  less every version published after CUTOFF (crates.io records `pubtime` for each), and
  the upstream's `config.json`, whose download URL is absolute: Cargo, pointed here by
  source replacement, locks the versions a crate could have had then.
"""

from __future__ import annotations

import html
import json
import os
import sys
import threading
import urllib.error
import urllib.request
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
_TIMEOUT_S = 120


def parse_time(text: str) -> datetime:
    """An RFC 3339 time as PyPI writes it (`2015-01-02T16:38:06.621099Z`), aware, in UTC."""
    when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)  # noqa: UP017 (any python3 runs it)
    return when.astimezone(timezone.utc)  # noqa: UP017


def _version_of(filename: str, versions: list[str]) -> str | None:
    for version in sorted(versions, key=len, reverse=True):
        if f"-{version}-" in filename or f"-{version}." in filename:
            return version
    return None


def cut(page: dict[str, Any], cutoff: datetime) -> dict[str, Any]:
    """The PEP 691 project page `page` as it was at `cutoff`: files uploaded later are left
    out, and versions with no file left; a file without an upload time is kept."""
    kept = []
    for entry in page.get("files", []):
        uploaded = entry.get("upload-time")
        if uploaded and parse_time(str(uploaded)) > cutoff:
            continue
        kept.append(entry)
    versions = [str(v) for v in page.get("versions", [])]
    left = {_version_of(str(entry.get("filename", "")), versions) for entry in kept}
    meta = dict(page.get("meta", {}))
    meta["api-version"] = "1.1"
    return {
        **page,
        "meta": meta,
        "files": kept,
        "versions": [v for v in versions if v in left],
    }


def cut_crate(text: str, cutoff: datetime) -> str:
    """A crate's sparse index file (one JSON line per version) as it was at `cutoff`: a
    version published later is left out; one without a publication time is kept."""
    kept = []
    for line in text.splitlines():
        if not line.strip():
            continue
        published = json.loads(line).get("pubtime")
        if published and parse_time(str(published)) > cutoff:
            continue
        kept.append(line)
    return "".join(f"{line}\n" for line in kept)


def to_html(page: dict[str, Any]) -> str:
    """A PEP 691 project page as PEP 503 HTML, with the data- attributes pip reads."""
    lines = ["<!DOCTYPE html>", "<html><head><title>Links</title></head><body>"]
    for entry in page.get("files", []):
        url = str(entry["url"])
        hashes = entry.get("hashes") or {}
        if "sha256" in hashes:
            url += f"#sha256={hashes['sha256']}"
        attributes = [f'href="{html.escape(url)}"']
        if entry.get("requires-python"):
            attributes.append(f'data-requires-python="{html.escape(entry["requires-python"])}"')
        yanked = entry.get("yanked")
        if yanked:
            reason = yanked if isinstance(yanked, str) else ""
            attributes.append(f'data-yanked="{html.escape(reason)}"')
        metadata = entry.get("core-metadata", entry.get("dist-info-metadata"))
        if metadata:
            value = (
                f"sha256={metadata['sha256']}"
                if isinstance(metadata, dict) and "sha256" in metadata
                else "true"
            )
            attributes.append(f'data-dist-info-metadata="{value}"')
            attributes.append(f'data-core-metadata="{value}"')
        name = html.escape(str(entry.get("filename", "")))
        lines.append(f"<a {' '.join(attributes)}>{name}</a><br/>")
    lines.append("</body></html>")
    return "\n".join(lines) + "\n"


class _Index:
    def __init__(self, cutoff: datetime, upstream: str, crates_upstream: str) -> None:
        self.cutoff = cutoff
        self.upstream = upstream.rstrip("/")
        self.crates_upstream = crates_upstream.rstrip("/")
        self._pages: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def crate_file(self, path: str) -> bytes | None:
        """The sparse index's file at `path` (`config.json`, `se/rd/serde`) as of the cutoff;
        None when no version of the crate had been published by then."""
        with urllib.request.urlopen(f"{self.crates_upstream}/{path}", timeout=_TIMEOUT_S) as got:
            body = got.read()
        if path == "config.json":
            return bytes(body)
        kept = cut_crate(body.decode(), self.cutoff)
        return kept.encode() if kept else None

    def page(self, project: str) -> dict[str, Any]:
        with self._lock:
            if project in self._pages:
                return self._pages[project]
        request = urllib.request.Request(
            f"{self.upstream}/{project}/", headers={"Accept": JSON_TYPE}
        )
        with urllib.request.urlopen(request, timeout=_TIMEOUT_S) as answer:
            page = cut(json.loads(answer.read().decode()), self.cutoff)
        with self._lock:
            self._pages[project] = page
        return page


def _handler(index: _Index) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = [part for part in self.path.split("?")[0].split("/") if part]
            if parts[:1] == ["crates"] and len(parts) > 1 and ".." not in parts:
                self._crate("/".join(parts[1:]))
                return
            if len(parts) != 2 or parts[0] != "simple":
                self._answer(
                    404, "text/plain", b"only /simple/<project>/ and /crates/ are served\n"
                )
                return
            try:
                page = index.page(parts[1])
            except urllib.error.HTTPError as exc:
                self._answer(exc.code, "text/plain", f"upstream: {exc}\n".encode())
                return
            except (OSError, ValueError) as exc:
                self._answer(502, "text/plain", f"upstream: {exc}\n".encode())
                return
            if JSON_TYPE in self.headers.get("Accept", ""):
                self._answer(200, JSON_TYPE, json.dumps(page).encode())
            else:
                self._answer(200, "text/html; charset=utf-8", to_html(page).encode())

        def _crate(self, path: str) -> None:
            try:
                body = index.crate_file(path)
            except urllib.error.HTTPError as exc:  # Cargo reads 404 and 410 as "no such crate"
                self._answer(exc.code, "text/plain", f"upstream: {exc}\n".encode())
                return
            except (OSError, ValueError) as exc:
                self._answer(502, "text/plain", f"upstream: {exc}\n".encode())
                return
            if body is None:
                self._answer(404, "text/plain", b"not published by the cutoff\n")
            else:
                self._answer(200, "application/json", body)

        def _answer(self, status: int, content_type: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            sys.stderr.write(f"{self.address_string()} {format % args}\n")

    return Handler


CRATES_UPSTREAM = "https://index.crates.io"


def main(argv: list[str]) -> None:
    cutoff, upstream, port_file, *crates = argv
    index = _Index(parse_time(cutoff), upstream, crates[0] if crates else CRATES_UPSTREAM)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(index))
    with open(port_file + ".tmp", "w") as out:
        out.write(str(server.server_address[1]))
    os.replace(port_file + ".tmp", port_file)
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
