"""One tiny request to a model's endpoint before it is registered, saying in a word what failed.

A check is an async request on the server's event loop (it never holds a thread that other
requests need), at most `ARENA_CHECK_CONCURRENCY` at once (the rest wait their turn), each within
its own deadline. It goes only to the model's own URL (`base_url` + `/chat/completions`: scheme,
host and port as registered) and follows no redirect. A failure is told as a category naming the
endpoint as registered, never as low-level error text (refused or timed out, resolved addresses,
what some other service answered), so the check cannot be used to map a private network.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

import httpx
from pydantic import ValidationError

from api.errors import ApiError
from arena.players.key_env import KeyEnvRefused, KeyEnvRule, key_from_env
from arena.players.openai import (
    AnswerCutOff,
    AnswerTimeout,
    AnswerTooLarge,
    NotACompletion,
    OpenAIModel,
    OpenAIPlayer,
    Reply,
)
from arena.scrub import KnownSecrets

_PROMPT = "Reply with the single word OK."
CHECK_TIMEOUT_S = 30.0  # at most; a model's own timeout_s when shorter
CHECK_ANSWER_BYTES = 64 * 1024  # a 16-token answer is far smaller

log = logging.getLogger(__name__)


def origin(base_url: str) -> str:
    """`scheme://host:port` of a URL, as written (the host is not resolved)."""
    url = httpx.URL(base_url)
    host = f"[{url.host}]" if ":" in url.host else url.host
    port = url.port or {"http": 80, "https": 443}.get(url.scheme)
    return f"{url.scheme}://{host}:{port}"


def _status_problem(where: str, reply: Reply) -> str:
    status = reply.status
    if 300 <= status < 400:
        return (
            f"{where} answered with a redirect (HTTP {status}), which is not followed:"
            " register the URL it leads to"
        )
    if status in (401, 403):
        return f"{where} refused the API key (HTTP {status})"
    if status == 404:
        return f"{where} has no such chat completions or model (HTTP 404): check base_url, model"
    if status in (408, 429) or status >= 500:
        return f"{where} is overloaded or failing (HTTP {status}): try again later"
    if 400 <= status < 500:
        return f"{where} refused the request (HTTP {status}): check model and the settings"
    return f"{where} answered HTTP {status}, not a chat completion"


async def _probe(model: OpenAIModel, api_key: str | None, secrets: KnownSecrets) -> str | None:
    """What is wrong with the endpoint, or None when it answered with a chat completion."""
    where = origin(model.base_url)
    player = OpenAIPlayer(model, api_key, max_answer_bytes=CHECK_ANSWER_BYTES, secrets=secrets)
    detail = ""  # for the server's log only
    try:
        async with player.client() as client:
            reply = await player.attempt(client, _PROMPT)
    except AnswerTooLarge:
        problem = f"{where} answered with more than {CHECK_ANSWER_BYTES} bytes to a tiny request"
    except AnswerTimeout:
        problem = f"{where} sent no whole answer within {model.timeout_s:g}s"
    except (httpx.ConnectError, httpx.ConnectTimeout) as exc:  # unknown host, refused, TLS
        problem, detail = f"cannot connect to {where}", repr(exc)
    except httpx.TransportError as exc:  # the connection broke, or what came back was not HTTP
        problem, detail = f"{where} did not answer with HTTP", repr(exc)
    else:
        if reply.status != 200:
            problem = _status_problem(where, reply)
        else:
            try:
                player.parse(reply)
            except AnswerCutOff:  # it answered: 16 tokens were just too few
                return None
            except NotACompletion:
                problem = f"{where} answered HTTP 200, but not with a chat completion"
            else:
                return None
    log.info("endpoint check of model %s failed: %s %s", model.name, problem, detail)
    return problem


class EndpointChecks:
    """The endpoint checks of one API process: at most `concurrency` at once. A key named by
    `api_key_env` is read from `environ` only when `key_env` allows the variable."""

    def __init__(
        self,
        concurrency: int,
        key_env: KeyEnvRule,
        environ: Mapping[str, str],
        secrets: KnownSecrets,
    ) -> None:
        self._slots = asyncio.Semaphore(concurrency)
        self._key_env = key_env
        self._environ = environ
        self._secrets = secrets

    async def check(self, spec: dict[str, Any], api_key: str | None) -> None:
        """Raises a 422 naming the problem; the key never appears in it."""
        try:
            model = OpenAIModel.model_validate(
                {
                    **spec,
                    "max_tokens": 16,
                    "max_retries": 0,
                    "timeout_s": min(spec["timeout_s"], CHECK_TIMEOUT_S),
                }
            )
            origin(model.base_url)
        except ValidationError as exc:
            msg = f"not a valid endpoint: {exc.errors()[0]['msg']}"
            raise ApiError(422, ["body"], msg) from None
        except httpx.InvalidURL:
            raise ApiError(422, ["body", "base_url"], "not a usable URL") from None
        if api_key is None and model.api_key_env:
            try:
                api_key = key_from_env(model.name, model.api_key_env, self._environ, self._key_env)
            except KeyEnvRefused as exc:
                raise ApiError(422, ["body", "api_key_env"], str(exc)) from None
            if api_key is None:  # said only of a variable the rule allows
                raise ApiError(
                    422,
                    ["body", "api_key_env"],
                    f"the check needs the key, but {model.api_key_env} is not set for the server",
                )
        async with self._slots:
            problem = await _probe(model, api_key, self._secrets)
        if problem is not None:
            raise ApiError(
                422, ["query", "check"], f"the endpoint check failed: {problem}", "check_failed"
            )
