"""What a model's answers on a board cost: answers, tokens and mean latency.

Counted when the board is computed, so the API can show cost (tokens x the model's current
price) and latency beside each rating without aggregating on read."""

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


def usage_by_model(matches: Iterable[MatchResult]) -> dict[str, Usage]:
    """Per model with at least one recorded answer (results files record none)."""
    totals: dict[str, list[float]] = {}
    for m in matches:
        for a in m.answers:
            t = totals.setdefault(a.model, [0, 0, 0, 0.0])
            t[0] += 1
            t[1] += a.prompt_tokens
            t[2] += a.completion_tokens
            t[3] += a.latency_s
    return {
        model: Usage(
            answers=int(n), prompt_tokens=int(p), completion_tokens=int(c), latency_s=lat / n
        )
        for model, (n, p, c, lat) in totals.items()
    }
