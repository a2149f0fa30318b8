"""Live event streams (server-sent events): caps per client address and in total, keep-alives,
and the close of a stream that has gone idle.

A stream is admitted before anything is read for it, so a refused one (429 with Retry-After)
costs no query. Its slot is held by the response itself and given back however the response
ends: its events ran out, it went idle, the client went away, or sending failed. Counts live
in the process (one event loop: no lock); several API processes each apply the caps."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import AsyncGenerator, AsyncIterator, Iterator

import anyio
from fastapi import Request
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.types import Receive, Scope, Send

from api.core.config import ApiSettings
from api.errors import ApiError

SEND_TIMEOUT_S = 30.0  # a client that stops reading for this long is cut off


def client_of(request: Request) -> str:
    """The client's address (behind a trusted proxy, uvicorn puts X-Forwarded-For here)."""
    return request.client.host if request.client else "unknown"


class Streams:
    """The event streams this process holds open, by client address."""

    def __init__(self, settings: ApiSettings) -> None:
        self.per_client = settings.streams_per_client
        self.limit = settings.streams_total
        self.keepalive_s = settings.stream_keepalive_s
        self.idle_s = settings.stream_idle_s
        self.retry_after_s = settings.stream_retry_after_s
        self._open: Counter[str] = Counter()
        self.total = 0

    def admit(self, request: Request) -> Slot:
        """A slot for one more stream, or 429 when the client or the process holds its cap."""
        client = client_of(request)
        if self._open[client] >= self.per_client:
            raise self._refusal(f"{self.per_client} live streams are open from this address")
        if self.total >= self.limit:
            raise self._refusal(f"the server holds its {self.limit} live streams")
        self._open[client] += 1
        self.total += 1
        return Slot(self, client)

    def _refusal(self, why: str) -> ApiError:
        return ApiError(
            429,
            ["stream"],
            f"{why}: close one, or retry after {self.retry_after_s} s",
            "too_many_streams",
            headers={"Retry-After": str(self.retry_after_s)},
        )

    def _release(self, client: str) -> None:
        self._open[client] -= 1
        if self._open[client] <= 0:
            del self._open[client]
        self.total -= 1


class Slot:
    """One admitted stream's place; given back once, however the stream ends."""

    def __init__(self, streams: Streams, client: str) -> None:
        self._streams = streams
        self._client = client
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._streams._release(self._client)

    @contextlib.contextmanager
    def released_on_error(self) -> Iterator[None]:
        """Around what runs between admission and the response (reads that may 404)."""
        try:
            yield
        except BaseException:
            self.release()
            raise

    def response(self, events: AsyncGenerator[ServerSentEvent, None]) -> EventSourceResponse:
        """The stream: keep-alive comments every `stream_keepalive_s`, closed with an `idle`
        event after `stream_idle_s` without one, and the slot given back when it ends."""
        streams = self._streams
        return _HeldStream(
            _until_idle(events, streams.idle_s),
            self,
            ping=streams.keepalive_s,
            send_timeout=SEND_TIMEOUT_S,
        )


class _HeldStream(EventSourceResponse):
    """An event stream that gives its slot back when it ends, whatever ends it."""

    def __init__(
        self,
        content: AsyncIterator[ServerSentEvent],
        slot: Slot,
        ping: float,
        send_timeout: float,
    ) -> None:
        super().__init__(content, ping=ping, send_timeout=send_timeout)
        self._slot = slot

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._slot.release()


async def _until_idle(
    events: AsyncGenerator[ServerSentEvent, None], idle_s: float
) -> AsyncIterator[ServerSentEvent]:
    """The events, until `idle_s` pass without one: then an `idle` event, and the end.

    Cancelling the wait (idle, or the client gone) ends `events` where it awaits, so whatever
    it holds there is let go."""
    async with contextlib.aclosing(events):
        while True:
            with anyio.move_on_after(idle_s) as waited:
                try:
                    event = await anext(events)
                except StopAsyncIteration:
                    return
            if waited.cancelled_caught:
                yield ServerSentEvent(
                    data=f"no event for {idle_s:g} s: reconnect to follow again", event="idle"
                )
                return
            yield event
