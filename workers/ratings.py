"""Leaderboards from stored results, one per combination of filters (JSON rows).

A board is cut by language, task kind and task-date window at once (each `None` for "all"),
so the API combines filters by reading one stored board instead of fitting on read. Each row
holds the match-level Bradley-Terry rating with its interval, W/L/T and Elo, the role-scoped
submitter and reviewer ratings fitted on the same rounds, the counts behind the round-fact
rates, and the tokens and latency of its answers."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from arena.ratings import Results, RoundResult, leaderboard, role_ratings
from arena.store.pool import Pool
from arena.store.snapshots import BOARD, board_key, store_snapshots
from arena.store.standings import model_meta, rated_matches

Snapshot = tuple[str, str, int, list[dict[str, Any]]]  # scope, value, matches, rows
CUTOFF = "cutoff"  # the window "tasks opened after each model's knowledge cutoff"
_FACTS = ("patch_applies", "patch_correct", "tests_valid", "tests_catch")


@dataclass(frozen=True)
class ModelDates:
    """What the cutoff window needs of a model: baselines were trained on nothing."""

    knowledge_cutoff: str | None  # YYYY-MM-DD
    baseline: bool


def dates_of(meta: Mapping[str, Mapping[str, Any]]) -> dict[str, ModelDates]:
    """From stored model metadata (`knowledge_cutoff` a date or None, `baseline`)."""
    return {
        name: ModelDates(
            None if m["knowledge_cutoff"] is None else m["knowledge_cutoff"].isoformat(),
            bool(m["baseline"]),
        )
        for name, m in meta.items()
    }


def cutoff_window(models: Mapping[str, ModelDates]) -> str:
    """The cutoff window's name, tied to the cutoffs it was computed with: a changed cutoff
    (or a new model) names another window, so a stale board is never mistaken for current."""
    text = "\n".join(
        f"{m}={d.knowledge_cutoff or ''}={int(d.baseline)}" for m, d in sorted(models.items())
    )
    return f"{CUTOFF}:{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def after_window(day: str) -> str:
    return f"after:{day}"


def _winner(match: Mapping[str, Any]) -> str:
    return "tie" if match["result"] == "tie" else ("a" if match["result"] == match["a"] else "b")


def usage(matches: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
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


def _rounds(matches: Iterable[Mapping[str, Any]]) -> list[RoundResult]:
    return [
        RoundResult(
            task=m["task"],
            submitter=r["submitter"],
            reviewer=r["reviewer"],
            winner=r["winner"],
            language=m["language"],
            kind=m["kind"],
            **{f: bool(r.get(f)) for f in _FACTS},
        )
        for m in matches
        for r in m["rounds"]
    ]


def fact_counts(rounds: Iterable[RoundResult]) -> dict[str, dict[str, int]]:
    """Per model, the counts behind its rates (swing protocol facts):

    - patch correct: of its rounds as submitter, those whose patch was correct;
    - tests valid: of its rounds as reviewer, those whose tests were valid;
    - catch: of its rounds as reviewer facing a wrong patch (it applied but was not correct),
      those whose tests caught it (valid tests that fail on the patch)."""
    found: dict[str, dict[str, int]] = {}

    def tally(model: str) -> dict[str, int]:
        return found.setdefault(
            model, {"submitted": 0, "correct": 0, "reviewed": 0, "valid": 0,
                    "wrong_patches": 0, "caught": 0},
        )  # fmt: skip

    for r in rounds:
        sub, rev = tally(r.submitter), tally(r.reviewer)
        sub["submitted"] += 1
        sub["correct"] += r.patch_correct
        rev["reviewed"] += 1
        rev["valid"] += r.tests_valid
        if r.patch_applies and not r.patch_correct:
            rev["wrong_patches"] += 1
            rev["caught"] += r.tests_valid and r.tests_catch
    return found


def _nan_free(value: float) -> float | None:
    return None if math.isnan(value) else value


def board(matches: Sequence[Mapping[str, Any]], bootstrap: int) -> list[dict[str, Any]]:
    """Pure: one board's rows from its finished matches, best rated first."""
    table = Results.from_rows(
        [(m["task"], m["a"], m["b"], _winner(m), m["language"]) for m in matches]
    )
    rows, _ = leaderboard(table, rounds=bootstrap, seed=0)
    rounds = _rounds(matches)
    by_role, _ = role_ratings(rounds) if rounds else ({}, None)
    facts = fact_counts(rounds)
    used = usage(matches)
    found = []
    for row in rows:
        sub, rev = by_role.get(row.model, (math.nan, math.nan))
        found.append(
            {
                **asdict(row),
                "submitter": _nan_free(sub),
                "reviewer": _nan_free(rev),
                "facts": facts.get(row.model),
                "usage": used.get(row.model),
            }
        )
    return found


def clean_for_both(match: Mapping[str, Any], models: Mapping[str, ModelDates]) -> bool:
    """The cutoff window: a match counts when its task's issue was opened strictly after the
    knowledge cutoff of each of its two models (a baseline has none to respect). A model with
    no recorded cutoff, or a task with no opening date, cannot be shown clean: left out."""
    opened = (match.get("created") or "")[:10]
    if not opened:
        return False
    for name in (match["a"], match["b"]):
        dates = models.get(name)
        if dates is None:
            return False
        if dates.baseline:
            continue
        if dates.knowledge_cutoff is None or not opened > dates.knowledge_cutoff:
            return False
    return True


def boards(
    matches: Sequence[Mapping[str, Any]], bootstrap: int, window: str | None = None
) -> list[Snapshot]:
    """Pure: a board for each combination of language and kind present (and "all" of each)."""
    if not matches:
        return [(BOARD, board_key(None, None, window), 0, [])] if window else []
    found: list[Snapshot] = []
    for language in (None, *sorted({m["language"] for m in matches})):
        for kind in (None, *sorted({m["kind"] for m in matches})):
            subset = [
                m
                for m in matches
                if (language is None or m["language"] == language)
                and (kind is None or m["kind"] == kind)
            ]
            if subset:
                key = board_key(language, kind, window)
                found.append((BOARD, key, len(subset), board(subset, bootstrap)))
    return found


def snapshots(
    matches: Sequence[Mapping[str, Any]],
    bootstrap: int,
    models: Mapping[str, ModelDates] | None = None,
) -> list[Snapshot]:
    """Pure: every board over all tasks, and (given the models' dates) every board of the
    cutoff window, so both are ready before anyone asks."""
    found = boards(matches, bootstrap)
    if models is not None:
        clean = [m for m in matches if clean_for_both(m, models)]
        found += boards(clean, bootstrap, cutoff_window(models))
    return found


# The edge: read results and model dates from PostgreSQL, store the boards.


def model_dates(pool: Pool) -> dict[str, ModelDates]:
    return dates_of(model_meta(pool))


def refresh_boards(pool: Pool, tournament_id: int | None, bootstrap: int) -> None:
    """Every board of a tournament (or of all, given None), the cutoff window's included."""
    found = snapshots(rated_matches(pool, tournament_id), bootstrap, model_dates(pool))
    store_snapshots(pool, tournament_id, found)


def refresh_window(pool: Pool, tournament_id: int | None, window: str, bootstrap: int) -> None:
    """The boards of one window asked for by the API: `cutoff` (with the current cutoffs) or
    a day (`YYYY-MM-DD`: tasks opened after it)."""
    if window == CUTOFF:
        models = model_dates(pool)
        clean = [m for m in rated_matches(pool, tournament_id) if clean_for_both(m, models)]
        found = boards(clean, bootstrap, cutoff_window(models))
    else:
        found = boards(rated_matches(pool, tournament_id, window), bootstrap, after_window(window))
    store_snapshots(pool, tournament_id, found)
