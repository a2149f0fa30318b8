"""Any OpenAI-compatible chat-completions endpoint as a player, with retries and limits.

The player is where an endpoint's text enters Arena: its answers and the bodies of its refusals
are scrubbed of the player's own key and of every secret its process knows (arena/scrub.py)
before they go into an answer, an error or an exception, so an endpoint that echoes the
`Authorization` header it was sent cannot put the key into a stored reason, evidence or a log.
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import random
import ssl
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field

from arena.players.base import (
    Answer,
    EndpointFault,
    ModelError,
    Player,
    Role,
    TaskContext,
    parsed_answer,
)
from arena.players.prompting import render_prompt
from arena.scrub import KnownSecrets
from arena.settings import DEFAULT_MAX_ANSWER_BYTES
from arena.vocabulary import ModelKind

_RETRYABLE = {408, 409, 425, 429, 500, 502, 503, 504}
_ERROR_BODY_BYTES = 4096  # of a refusal (4xx, 5xx) only this much is read, for its message
_QUOTED_CHARS = 200  # of a refusal or a malformed answer, this much is quoted in the error


class NotACompletion(ValueError):
    """A 200 response without a chat completion in it: retried like a 5xx."""


class AnswerTimeout(ModelError):
    """The request was sent but the whole answer did not arrive within the model's `timeout_s`."""


class AnswerTooLarge(ModelError):
    """The answer passed the size cap: it was refused without reading further."""


class AnswerCutOff(ModelError):
    """The answer stopped at the token limit (`finish_reason=length`)."""


class BadUsage(ModelError):
    """The endpoint reported token usage no request of ours could have used: negative, not a
    whole number, or more than the prompt's bytes (plus a chat template) or `max_tokens`
    allow. Budgets and listings add usage up, so it is refused where it is read."""


# tokens a chat template and system prompt may add to a prompt's own bytes (one token is at
# least one byte of the text it stands for)
PROMPT_TEMPLATE_TOKENS = 4096


def checked_usage(
    model: str, usage: dict[str, Any], prompt_bytes: int, max_tokens: int
) -> tuple[int, int]:
    """(prompt tokens, completion tokens) as reported, or BadUsage naming the field at fault;
    a field the endpoint leaves out counts 0."""
    limits = {
        "prompt_tokens": prompt_bytes + PROMPT_TEMPLATE_TOKENS,
        "completion_tokens": max_tokens,
    }
    counts = []
    for field_name, limit in limits.items():
        value = usage.get(field_name)
        if value is None:
            counts.append(0)
            continue
        number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
        if number is None or not math.isfinite(number) or number != int(number):
            raise BadUsage(
                f"model {model}: usage.{field_name} is not a whole number: {str(value)[:40]!r}"
            )
        if not 0 <= number <= limit:
            raise BadUsage(
                f"model {model}: usage.{field_name} = {int(number)} is out of range: a request of "
                f"{prompt_bytes} prompt bytes and max_tokens={max_tokens} allows 0 to {limit}"
            )
        counts.append(int(number))
    return counts[0], counts[1]


class OpenAIModel(BaseModel):
    """A model defined in a models file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    kind: str = ModelKind.OPENAI.value
    base_url: str
    model: str
    api_key_env: str | None = None
    temperature: float = 0.0
    max_tokens: int = Field(default=4096, gt=0)
    timeout_s: float = Field(default=300, gt=0)  # the whole of one attempt, its answer read
    max_concurrency: int = Field(default=4, gt=0)
    max_retries: int = Field(default=5, ge=0)
    backoff_s: float = Field(default=1.0, gt=0)
    max_backoff_s: float = Field(default=60, gt=0)


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context for every client: building one reads the CA bundle (some 25 ms of CPU,
    which an event loop running many endpoint checks cannot spare each time)."""
    return httpx.create_ssl_context()


@dataclass(frozen=True)
class Reply:
    """One attempt's HTTP answer: its status and body (at most the cap; a refusal's first KiB)."""

    status: int
    body: bytes
    retry_after: str | None = None


class OpenAIPlayer(Player):
    def __init__(
        self,
        spec: OpenAIModel,
        api_key: str | None,
        system_prompt: str | None = None,
        max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
        secrets: KnownSecrets | None = None,
    ) -> None:
        """`secrets`: what the process knows (the service's); the key is added to them."""
        self.name = spec.name
        self._spec = spec
        self._api_key = api_key
        self._secrets = secrets if secrets is not None else KnownSecrets()
        self._secrets.add(api_key)
        self._slots = threading.BoundedSemaphore(spec.max_concurrency)
        self._system = system_prompt
        self._max_answer_bytes = max_answer_bytes

    @property
    def url(self) -> str:
        """The only URL a call is sent to; redirects are never followed."""
        return self._spec.base_url.rstrip("/") + "/chat/completions"

    def _backoff(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return float(min(float(retry_after), self._spec.max_backoff_s))
            except ValueError:
                pass
        delay: float = min(self._spec.backoff_s * 2.0**attempt, self._spec.max_backoff_s)
        return delay * random.uniform(0.5, 1.5)

    def client(self) -> httpx.AsyncClient:
        """A client for one call: no timeouts of its own (each attempt has a total deadline), no
        redirects, and plain (not compressed) answers asked for, so the cap counts real bytes."""
        return httpx.AsyncClient(
            verify=_tls(),
            timeout=None,
            follow_redirects=False,
            headers={"Accept-Encoding": "identity"},
        )

    async def attempt(self, client: httpx.AsyncClient, prompt: str) -> Reply:
        """One request, connection to last byte within `timeout_s`; a 200 body is read up to the
        cap and refused past it (AnswerTooLarge). A deadline passed once the request went out is
        the model's (AnswerTimeout); before that, the connection's (httpx.ConnectTimeout)."""
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        messages = ([{"role": "system", "content": self._system}] if self._system else []) + [
            {"role": "user", "content": prompt}
        ]
        body = {
            "model": self._spec.model,
            "messages": messages,
            "temperature": self._spec.temperature,
            "max_tokens": self._spec.max_tokens,
        }
        connected = False

        async def trace(event: str, _: dict[str, Any]) -> None:
            nonlocal connected
            if event.startswith(("http11.", "http2.")):  # the request is being sent
                connected = True

        timeout = self._spec.timeout_s
        try:
            async with asyncio.timeout(timeout):
                return await self._exchange(client, body, headers, trace)
        except TimeoutError:
            if not connected:
                raise httpx.ConnectTimeout(f"no connection within {timeout:g}s") from None
            raise AnswerTimeout(
                f"model {self.name}: no answer within its timeout of {timeout:g}s"
            ) from None

    async def _exchange(
        self,
        client: httpx.AsyncClient,
        body: dict[str, Any],
        headers: dict[str, str],
        trace: Callable[[str, dict[str, Any]], Awaitable[None]],
    ) -> Reply:
        cap = self._max_answer_bytes
        async with client.stream(
            "POST", self.url, json=body, headers=headers, extensions={"trace": trace}
        ) as response:
            ok = response.status_code == 200
            limit = cap if ok else _ERROR_BODY_BYTES
            declared = response.headers.get("Content-Length", "")
            if ok and declared.isdigit() and int(declared) > cap:
                raise self._too_large(f"{declared} bytes were announced")
            read = bytearray()
            async for chunk in response.aiter_bytes():
                read += chunk
                if len(read) > limit:
                    if ok:
                        raise self._too_large("it was not read past the cap")
                    del read[limit:]
                    break
            return Reply(response.status_code, bytes(read), response.headers.get("Retry-After"))

    def _quote(self, body: bytes) -> str:
        """The start of an endpoint's body for an error message: scrubbed whole, then cut (a
        secret cut in half first would no longer be found)."""
        return self._secrets.scrub(body.decode(errors="replace"))[:_QUOTED_CHARS]

    def _too_large(self, how: str) -> AnswerTooLarge:
        return AnswerTooLarge(
            f"model {self.name}: the answer is larger than the cap of {self._max_answer_bytes}"
            f" bytes (ARENA_MAX_ANSWER_BYTES); {how}"
        )

    def complete(self, prompt: str) -> tuple[str, dict[str, Any]]:
        """The answer text and usage.

        Whose fault a failure is decides whether it is scored (swing-protocol.md, "Faults"):
        an answer that does not arrive whole within `timeout_s`, is larger than the cap or is
        cut off at `max_tokens` is the model's (ModelError); a refused configuration, an
        unreachable host, or 429/5xx and transport errors that outlast the jittered retries are
        the endpoint's (EndpointFault). Each attempt has its own `timeout_s`; the call holds one
        of the player's `max_concurrency` slots throughout, its backoffs included.
        """
        with self._slots:
            return asyncio.run(self._complete(prompt))

    async def _complete(self, prompt: str) -> tuple[str, dict[str, Any]]:
        last = "no attempt made"
        async with self.client() as client:
            for attempt in range(self._spec.max_retries + 1):
                retry_after = None
                try:
                    reply = await self.attempt(client, prompt)
                except httpx.ConnectError as exc:
                    why = self._secrets.scrub(str(exc))
                    raise EndpointFault(self.name, f"cannot connect to {self.url}: {why}") from None
                except httpx.TransportError as exc:
                    last = self._secrets.scrub(f"transport error: {exc!r}")
                else:
                    if reply.status == 200:
                        try:
                            return self.parse(reply)
                        except NotACompletion as exc:
                            last = str(exc)
                    else:
                        last = f"HTTP {reply.status}: {self._quote(reply.body)}"
                        if reply.status not in _RETRYABLE:
                            raise EndpointFault(
                                self.name, f"{self.url} refused the request: {last}"
                            )
                        retry_after = reply.retry_after
                if attempt < self._spec.max_retries:
                    await asyncio.sleep(self._backoff(attempt, retry_after))
        raise EndpointFault(
            self.name, f"gave up after {self._spec.max_retries + 1} attempts; last: {last}"
        )

    def parse(self, reply: Reply) -> tuple[str, dict[str, Any]]:
        """The text and usage of a 200's chat completion (NotACompletion without one)."""
        try:
            payload = json.loads(reply.body)
            choice = payload["choices"][0]
            content = choice["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise NotACompletion(f"malformed response: {self._quote(reply.body)!r}") from None
        if choice.get("finish_reason") == "length":
            raise AnswerCutOff(
                f"model {self.name}: the answer was cut off at the token limit "
                f"(finish_reason=length, max_tokens={self._spec.max_tokens})"
            )
        usage = payload.get("usage") or {}
        return self._secrets.scrub(str(content or "")), usage if isinstance(usage, dict) else {}

    def _answer(self, prompt: str, ctx: TaskContext) -> Answer:
        started = time.monotonic()
        try:
            text, usage = self.complete(prompt)
            prompt_tokens, completion_tokens = checked_usage(
                self.name, usage, len(prompt.encode()), self._spec.max_tokens
            )
        except ModelError as exc:
            return Answer(error=str(exc), latency_s=time.monotonic() - started)
        return parsed_answer(
            text,
            ctx.read_file,
            latency_s=time.monotonic() - started,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
        )

    def propose_patch(self, ctx: TaskContext) -> Answer:
        return self._answer(render_prompt(Role.SUBMITTER, ctx), ctx)

    def propose_tests(self, ctx: TaskContext, patch: str | None) -> Answer:
        return self._answer(render_prompt(Role.REVIEWER, ctx, patch), ctx)
