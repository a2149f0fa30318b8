"""Any OpenAI-compatible chat-completions endpoint as a player, with retries and limits."""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field

from arena.players.base import Answer, ModelError, Player, Role, TaskContext, parsed_answer
from arena.prompting import render_prompt

_RETRYABLE = {408, 409, 425, 429, 500, 502, 503, 504}


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
        """The answer text and usage, retrying 429, 5xx and timeouts with jittered backoff."""
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
            except httpx.TimeoutException:
                last = f"timed out after {self._spec.timeout_s:g}s"
            except httpx.TransportError as exc:
                last = f"connection failed: {exc}"
            else:
                if response.status_code == 200:
                    return self._content(response)
                last = f"HTTP {response.status_code}: {response.text[:200]}"
                if response.status_code not in _RETRYABLE:
                    raise ModelError(f"model {self.name}: {last}")
                retry_after = response.headers.get("Retry-After")
            if attempt < self._spec.max_retries:
                time.sleep(self._backoff(attempt, retry_after))
        raise ModelError(
            f"model {self.name}: gave up after {self._spec.max_retries + 1} attempts; last: {last}"
        )

    def _content(self, response: httpx.Response) -> tuple[str, dict[str, Any]]:
        try:
            payload = response.json()
            content = payload["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ModelError(
                f"model {self.name}: malformed response: {response.text[:200]!r}"
            ) from exc
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
