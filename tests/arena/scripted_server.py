"""A local OpenAI-compatible HTTP server whose answers are scripted per request."""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ECHO_AUTH = "<<Authorization>>"  # in a reply's content or body: the request's Authorization header


@dataclass
class Reply:
    status: int = 200
    content: str | None = None  # the chat answer, wrapped in a completion (ECHO_AUTH echoes)
    body: str | None = None  # or a raw body (ECHO_AUTH echoes)
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    finish_reason: str = "stop"
    drip_s: float = 0.0  # the response one byte at a time, this far apart
    drip_head: bool = True  # from its status line on (else the head at once, then the body)
    answer_bytes: int = 0  # a completion this many bytes long, made as it is sent (never whole)
    send_length: bool = True  # with Content-Length (else the closed connection ends the body)
    usage: str | None = None  # the completion's usage, as JSON text (None: a plausible one)


# an answer whose patch adds one file 1,000 folders deep and fixes nothing: it once crashed
# Arena's tripwire planter, and the match it was losing was voided
DEEP = "/".join(["d"] * 1000) + "/x.py"
WRONG_AND_DEEP = (
    "My fix.\n\n```diff\n"
    f"diff --git a/{DEEP} b/{DEEP}\nnew file mode 100644\n--- /dev/null\n+++ b/{DEEP}\n"
    "@@ -0,0 +1 @@\n+x = 1\n```\n"
)


def completion(content: str, finish_reason: str = "stop", usage: str | None = None) -> str:
    message = {"role": "assistant", "content": content}
    text = json.dumps(
        {
            "id": "cmpl-1",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150},
        }
    )
    if usage is None:
        return text
    # as the endpoint wrote it, NaN and numbers past any integer type included
    return text.replace(
        '{"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}', usage
    )


@dataclass
class ScriptedServer:
    url: str
    script: list[Reply]
    requests: list[dict[str, Any]]
    auth: list[str | None]
    busy: int = 0  # requests waiting out their reply's delay now
    most_busy: int = 0  # the most ever at once


def _echoing(reply: Reply, authorization: str) -> Reply:
    """The reply with ECHO_AUTH replaced by the header, as a careless endpoint echoes it."""
    echo = {
        f: getattr(reply, f).replace(ECHO_AUTH, authorization)
        for f in ("content", "body")
        if getattr(reply, f) is not None
    }
    return dataclasses.replace(reply, **echo)


@contextmanager
def scripted_server(
    script: list[Reply],
    default: Reply | None = None,
    host: str = "127.0.0.1",
    route: Callable[[dict[str, Any]], Reply | None] | None = None,
) -> Iterator[ScriptedServer]:
    """Serve `script` in order (then `default`, or 500s) on `host`, for this block only.

    `host` is a loopback address, or the Docker bridge's own address for containers to reach.
    `route` answers a request by what it asks (its JSON payload) where requests come in no
    fixed order (a service's concurrent matches); None leaves it to the script.
    """
    state = ScriptedServer(url="", script=list(script), requests=[], auth=[])
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            payload = json.loads(self.rfile.read(length) or b"{}")
            with lock:
                state.requests.append({"path": self.path, **payload})
                state.auth.append(self.headers.get("Authorization"))
                routed = route(payload) if route is not None else None
                reply = routed or (
                    state.script.pop(0)
                    if state.script
                    else (default or Reply(status=500, body="{}"))
                )
                reply = _echoing(reply, self.headers.get("Authorization") or "")
                state.busy += 1
                state.most_busy = max(state.most_busy, state.busy)
            time.sleep(reply.delay_s)
            with lock:  # before the reply: a client that has it sees this request done
                state.busy -= 1
            try:
                if reply.drip_s:
                    return self._drip(reply)
                if reply.answer_bytes:
                    return self._huge(reply)
            except (BrokenPipeError, ConnectionResetError):
                return  # the client gave up (a deadline or a cap)
            body = (
                reply.body
                if reply.body is not None
                else completion(reply.content or "", reply.finish_reason, reply.usage)
            )
            try:
                self.send_response(reply.status)
                for key, value in {"Content-Type": "application/json", **reply.headers}.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body.encode())))
                self.end_headers()
                self.wfile.write(body.encode())
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test)

        def _drip(self, reply: Reply) -> None:
            body = (
                reply.body if reply.body is not None else completion(reply.content or "")
            ).encode()
            head = f"HTTP/1.1 {reply.status} OK\r\nContent-Type: application/json\r\n"
            raw = f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body
            start = 0 if reply.drip_head else len(raw) - len(body)
            self.wfile.write(raw[:start])
            for i in range(start, len(raw)):
                self.wfile.write(raw[i : i + 1])
                time.sleep(reply.drip_s)

        def _huge(self, reply: Reply) -> None:
            head, tail = completion("@").encode().split(b"@")
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            if reply.send_length:
                self.send_header("Content-Length", str(len(head) + reply.answer_bytes + len(tail)))
            self.end_headers()
            self.wfile.write(head)
            chunk, left = b"x" * 65536, reply.answer_bytes
            while left > 0:
                self.wfile.write(chunk[:left])
                left -= len(chunk)
            self.wfile.write(tail)

        def log_message(self, *_: object) -> None:
            return None

    server = ThreadingHTTPServer((host, 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://{host}:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
