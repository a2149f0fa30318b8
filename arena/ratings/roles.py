"""Submitter and reviewer abilities: each round is one submitter-vs-reviewer comparison."""

from __future__ import annotations

from collections.abc import Sequence

from arena.ratings.bradley_terry import BTFit, fit_bradley_terry
from arena.ratings.pairs import match_counts, pair_scores
from arena.ratings.records import RoundResult
from arena.ratings.results import Results

_ROUND_SCORE = {"submitter": "a", "reviewer": "b", "draw": "tie"}


def role_name(model: str, role: str) -> str:
    return f"{model} ({role})"


def role_ratings(rounds: Sequence[RoundResult]) -> tuple[dict[str, tuple[float, float]], BTFit]:
    """Per model: (submitter rating, reviewer rating), on one Bradley-Terry scale."""
    rows = []
    for r in rounds:
        if r.winner not in _ROUND_SCORE:
            raise ValueError(f"task {r.task}: round winner must be submitter, reviewer or draw")
        rows.append(
            (
                r.task,
                role_name(r.submitter, "submitter"),
                role_name(r.reviewer, "reviewer"),
                _ROUND_SCORE[r.winner],
            )
        )
    table = Results.from_rows(rows)
    fit = fit_bradley_terry(table.models, pair_scores(table), match_counts(table))
    models = sorted({r.submitter for r in rounds} | {r.reviewer for r in rounds})
    by_model = {}
    for m in models:
        sub = role_name(m, "submitter")
        rev = role_name(m, "reviewer")
        by_model[m] = (
            fit.rating(sub) if sub in fit.models else float("nan"),
            fit.rating(rev) if rev in fit.models else float("nan"),
        )
    return by_model, fit
