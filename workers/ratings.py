"""Leaderboards from stored results: overall, per language, per task kind, per role (JSON rows)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from arena.ratings import Results, RoundResult, leaderboard, role_ratings

Snapshot = tuple[str, str, int, list[dict[str, Any]]]  # scope, value, matches, rows


def _winner(match: dict[str, Any]) -> str:
    return "tie" if match["result"] == "tie" else ("a" if match["result"] == match["a"] else "b")


def usage(matches: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per model: answers, their tokens and mean latency, so the API can show cost (tokens x
    the model's current price) and latency beside each rating without aggregating on read."""
    found: dict[str, dict[str, float]] = {}
    for m in matches:
        for a in m.get("answers") or ():
            used = found.setdefault(
                a["model"], {"answers": 0, "prompt_tokens": 0, "completion_tokens": 0,
                             "latency_s": 0.0}
            )  # fmt: skip
            used["answers"] += 1
            used["prompt_tokens"] += a["prompt_tokens"]
            used["completion_tokens"] += a["completion_tokens"]
            used["latency_s"] += a["latency_s"]
    for used in found.values():
        used["latency_s"] /= used["answers"]
    return found


def _with_usage(
    rows: list[dict[str, Any]], matches: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    used = usage(matches)
    return [{**r, "usage": used.get(r["model"])} for r in rows]


def _board(matches: Sequence[dict[str, Any]], bootstrap: int) -> list[dict[str, Any]]:
    rows = [(m["task"], m["a"], m["b"], _winner(m), m["language"]) for m in matches]
    board, _ = leaderboard(Results.from_rows(rows), rounds=bootstrap, seed=0)
    return _with_usage([asdict(r) for r in board], matches)


def _nan_free(value: float) -> float | None:
    return None if math.isnan(value) else value


def snapshots(matches: Sequence[dict[str, Any]], bootstrap: int) -> list[Snapshot]:
    """Pure: every scope's leaderboard from finished matches (see finished_results)."""
    if not matches:
        return []
    found: list[Snapshot] = [("overall", "", len(matches), _board(matches, bootstrap))]
    for scope in ("language", "kind"):
        for value in sorted({m[scope] for m in matches}):
            subset = [m for m in matches if m[scope] == value]
            found.append((scope, value, len(subset), _board(subset, bootstrap)))
    rounds = [
        RoundResult(
            task=m["task"],
            submitter=r["submitter"],
            reviewer=r["reviewer"],
            winner=r["winner"],
            language=m["language"],
        )
        for m in matches
        for r in m["rounds"]
    ]
    by_model, _ = role_ratings(rounds)
    role_rows = _with_usage(
        [
            {"model": model, "submitter": _nan_free(sub), "reviewer": _nan_free(rev)}
            for model, (sub, rev) in sorted(by_model.items())
        ],
        matches,
    )
    found.append(("role", "", len(matches), role_rows))
    return found
