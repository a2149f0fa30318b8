"""Any OpenAI-compatible chat-completions endpoint as a player, with retries and limits."""

from __future__ import annotations

import random
import threading
import time
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
from arena.prompting import render_prompt

_RETRYABLE = {408, 409, 425, 429, 500, 502, 503, 504}


class _Malformed(ValueError):
    """A 200 response without a chat completion in it: retried like a 5xx."""


class OpenAIModel(BaseModel):
    """A model defined in a models file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    kind: str = "openai"
    base_url: str
    model: str
    api_key_env: str | None = None
    temperature: float = 0.0
    max_tokens: int = Field(default=4096, gt=0)
    timeout_s: float = Field(default=300, gt=0)
    max_concurrency: int = Field(default=4, gt=0)
    max_retries: int = Field(default=5, ge=0)
    backoff_s: float = Field(default=1.0, gt=0)
    max_backoff_s: float = Field(default=60, gt=0)


class OpenAIPlayer(Player):
    def __init__(
        self, spec: OpenAIModel, api_key: str | None, system_prompt: str | None = None
    ) -> None:
        self.name = spec.name
        self._spec = spec
        self._api_key = api_key
        self._slots = threading.BoundedSemaphore(spec.max_concurrency)
        self._system = system_prompt
        self._client = httpx.Client(timeout=spec.timeout_s)

    def _backoff(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return float(min(float(retry_after), self._spec.max_backoff_s))
            except ValueError:
                pass
        delay: float = min(self._spec.backoff_s * 2.0**attempt, self._spec.max_backoff_s)
        return delay * random.uniform(0.5, 1.5)

    def complete(self, prompt: str) -> tuple[str, dict[str, Any]]:
        """The answer text and usage.

        Whose fault a failure is decides whether it is scored (swing-protocol.md, "Faults"):
        an answer that does not arrive within `timeout_s` or is cut off at `max_tokens` is the
        model's (ModelError); a refused configuration, an unreachable host, or 429/5xx and
        transport errors that outlast the jittered retries are the endpoint's (EndpointFault).
        """
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
        url = self._spec.base_url.rstrip("/") + "/chat/completions"
        last = "no attempt made"
        for attempt in range(self._spec.max_retries + 1):
            retry_after = None
            try:
                with self._slots:
                    response = self._client.post(url, json=body, headers=headers)
            except (httpx.ReadTimeout, httpx.WriteTimeout) as exc:
                raise ModelError(
                    f"model {self.name}: no answer within its timeout of {self._spec.timeout_s:g}s"
                ) from exc
            except httpx.ConnectError as exc:
                raise EndpointFault(self.name, f"cannot connect to {url}: {exc}") from exc
            except httpx.TransportError as exc:
                last = f"transport error: {exc!r}"
            else:
                if response.status_code == 200:
                    try:
                        return self._content(response)
                    except _Malformed as exc:
                        last = str(exc)
                else:
                    last = f"HTTP {response.status_code}: {response.text[:200]}"
                    if response.status_code not in _RETRYABLE:
                        raise EndpointFault(self.name, f"{url} refused the request: {last}")
                    retry_after = response.headers.get("Retry-After")
            if attempt < self._spec.max_retries:
                time.sleep(self._backoff(attempt, retry_after))
        raise EndpointFault(
            self.name, f"gave up after {self._spec.max_retries + 1} attempts; last: {last}"
        )

    def _content(self, response: httpx.Response) -> tuple[str, dict[str, Any]]:
        try:
            payload = response.json()
            choice = payload["choices"][0]
            content = choice["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise _Malformed(f"malformed response: {response.text[:200]!r}") from exc
        if choice.get("finish_reason") == "length":
            raise ModelError(
                f"model {self.name}: the answer was cut off at the token limit "
                f"(finish_reason=length, max_tokens={self._spec.max_tokens})"
            )
        usage = payload.get("usage") or {}
        return str(content or ""), usage if isinstance(usage, dict) else {}

    def _answer(self, prompt: str, ctx: TaskContext) -> Answer:
        started = time.monotonic()
        try:
            text, usage = self.complete(prompt)
        except ModelError as exc:
            return Answer(error=str(exc), latency_s=time.monotonic() - started)
        return parsed_answer(
            text,
            ctx.read_file,
            latency_s=time.monotonic() - started,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
        )

    def propose_patch(self, ctx: TaskContext) -> Answer:
        return self._answer(render_prompt(Role.SUBMITTER, ctx), ctx)

    def propose_tests(self, ctx: TaskContext, patch: str | None) -> Answer:
        return self._answer(render_prompt(Role.REVIEWER, ctx, patch), ctx)
