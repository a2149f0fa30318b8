"""Fixtures of the task import tests."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


@pytest.fixture(scope="session")
def conda_channel() -> Iterator[str]:
    """A conda channel that answers (its repodata, as anaconda.org serves it)."""

    class Channel(BaseHTTPRequestHandler):
        def do_HEAD(self) -> None:
            known = self.path == "/conda-forge/noarch/repodata.json"
            self.send_response(200 if known else 404)
            self.end_headers()

        def log_message(self, *_: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Channel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/conda-forge"
    server.shutdown()
    server.server_close()
