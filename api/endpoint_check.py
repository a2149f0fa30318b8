"""One tiny request to a model's endpoint before it is registered, saying exactly what failed."""

from __future__ import annotations

import os
from typing import Any

from pydantic import ValidationError

from api.core.config import ApiSettings
from api.errors import ApiError
from arena.players.base import EndpointFault, ModelError
from arena.players.openai import OpenAIModel, OpenAIPlayer

_PROMPT = "Reply with the single word OK."


def check_endpoint(spec: dict[str, Any], api_key: str | None, settings: ApiSettings) -> None:
    """Raises a 422 naming the problem; the key never appears in it."""
    try:
        model = OpenAIModel.model_validate(
            {**spec, "max_tokens": 16, "max_retries": 0, "timeout_s": min(spec["timeout_s"], 30)}
        )
    except ValidationError as exc:
        raise ApiError(422, ["body"], f"not a valid endpoint: {exc.errors()[0]['msg']}") from None
    if api_key is None and model.api_key_env:
        api_key = os.environ.get(model.api_key_env)
        if api_key is None:
            raise ApiError(
                422,
                ["body", "api_key_env"],
                f"the check needs the key, but {model.api_key_env} is not set for the server",
            )
    player = OpenAIPlayer(model, api_key)
    try:
        player.complete(_PROMPT)
    except ModelError as exc:
        if "cut off" in str(exc):  # it answered: 16 tokens were just too few
            return
        problem = str(exc)
    except EndpointFault as exc:
        problem = exc.reason
    except Exception as exc:  # an unusable URL and the like: the endpoint cannot be used
        problem = f"{type(exc).__name__}: {exc}"
    else:
        return
    if api_key:
        problem = problem.replace(api_key, "***")
    raise ApiError(422, ["query", "check"], f"the endpoint check failed: {problem}", "check_failed")
