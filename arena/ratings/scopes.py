"""Which boards there are: one per language x task kind (each also "all") and task-date window.

A board is cut by language, task kind and window at once, so the API combines filters by
reading one stored board instead of fitting on read. The windows are contamination views:
tasks opened after both models' knowledge cutoffs, or after a given day.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from arena.ratings.board import Board, build_board
from arena.ratings.records import MatchResult

CUTOFF = "cutoff"  # the window "tasks opened after each model's knowledge cutoff"


@dataclass(frozen=True)
class ModelDates:
    """What the cutoff window needs of a model: baselines were trained on nothing."""

    knowledge_cutoff: str | None  # YYYY-MM-DD
    baseline: bool


def cutoff_window(models: Mapping[str, ModelDates]) -> str:
    """The cutoff window's name, tied to the cutoffs it was computed with: a changed cutoff
    (or a new model) names another window, so a stale board is never mistaken for current."""
    text = "\n".join(
        f"{m}={d.knowledge_cutoff or ''}={int(d.baseline)}" for m, d in sorted(models.items())
    )
    return f"{CUTOFF}:{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def after_window(day: str) -> str:
    return f"after:{day}"


def clean_for_both(match: MatchResult, models: Mapping[str, ModelDates]) -> bool:
    """The cutoff window: a match counts when its task's issue was opened strictly after the
    knowledge cutoff of each of its two models (a baseline has none to respect). A model with
    no recorded cutoff, or a task with no opening date, cannot be shown clean: left out."""
    opened = (match.opened or "")[:10]
    if not opened:
        return False
    for name in (match.a, match.b):
        dates = models.get(name)
        if dates is None:
            return False
        if dates.baseline:
            continue
        if dates.knowledge_cutoff is None or not opened > dates.knowledge_cutoff:
            return False
    return True


@dataclass(frozen=True)
class Scope:
    """A board's filters; None is "all"."""

    language: str | None = None
    kind: str | None = None
    window: str | None = None


@dataclass(frozen=True)
class ScopedBoard:
    scope: Scope
    board: Board


def boards(
    matches: Sequence[MatchResult], bootstrap: int, window: str | None = None
) -> list[ScopedBoard]:
    """Pure: a board for each combination of language and kind present (and "all" of each).
    A window without matches still gets its (empty) overall board, so a reader can tell
    "computed, nothing there" from "not computed yet"."""
    if not matches:
        return [ScopedBoard(Scope(window=window), Board((), (), 0))] if window else []
    found: list[ScopedBoard] = []
    languages = sorted({m.language for m in matches if m.language is not None})
    kinds = sorted({m.kind for m in matches if m.kind is not None})
    for language in (None, *languages):
        for kind in (None, *kinds):
            subset = [
                m
                for m in matches
                if (language is None or m.language == language) and (kind is None or m.kind == kind)
            ]
            if subset:
                found.append(
                    ScopedBoard(Scope(language, kind, window), build_board(subset, bootstrap))
                )
    return found


def snapshots(
    matches: Sequence[MatchResult],
    bootstrap: int,
    models: Mapping[str, ModelDates] | None = None,
) -> list[ScopedBoard]:
    """Pure: every board over all tasks, and (given the models' dates) every board of the
    cutoff window, so both are ready before anyone asks."""
    found = boards(matches, bootstrap)
    if models is not None:
        clean = [m for m in matches if clean_for_both(m, models)]
        found += boards(clean, bootstrap, cutoff_window(models))
    return found
