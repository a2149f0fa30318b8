"""What a model's matches on a board cost: answers, tokens, mean latency and CI time.

Counted when the board is computed, so the API can show cost (tokens x the model's current
price), latency and CI time beside each rating without aggregating on read. A match's CI
runs judge both of its models, so its CI time counts for each."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from arena.ratings.records import MatchResult


class Usage(BaseModel):
    model_config = ConfigDict(frozen=True)

    answers: int
    prompt_tokens: int
    completion_tokens: int
    latency_s: float  # mean seconds per answer
    ci_seconds: float | None = None  # its matches' CI time; None: not recorded (old boards)


def usage_by_model(matches: Iterable[MatchResult]) -> dict[str, Usage]:
    """Per model with a recorded answer or CI time (results files may record neither)."""
    totals: dict[str, list[float]] = {}
    ci: dict[str, float] = {}
    for m in matches:
        for a in m.answers:
            t = totals.setdefault(a.model, [0, 0, 0, 0.0])
            t[0] += 1
            t[1] += a.prompt_tokens
            t[2] += a.completion_tokens
            t[3] += a.latency_s
        if m.ci_seconds is not None:
            for model in (m.a, m.b):
                ci[model] = ci.get(model, 0.0) + m.ci_seconds
    return {
        model: Usage(
            answers=int(n),
            prompt_tokens=int(p),
            completion_tokens=int(c),
            latency_s=lat / n if n else 0.0,
            ci_seconds=ci.get(model),
        )
        for model, (n, p, c, lat) in (
            (model, totals.get(model, [0, 0, 0, 0.0])) for model in sorted({*totals, *ci})
        )
    }
