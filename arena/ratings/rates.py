"""Absolute rates per model and language: patch correct, tests valid, catch, draw."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from arena.ratings.results import RoundResult


@dataclass(frozen=True)
class RoleRates:
    model: str
    language: str
    rounds: int
    patch_correct: float  # of its rounds as submitter
    tests_valid: float  # of its rounds as reviewer
    catch: float  # of its reviewer rounds where valid tests met an applying patch
    draw: float  # of all its rounds


def _share(hits: int, total: int) -> float:
    return hits / total if total else float("nan")


def rates_by_model_and_language(rounds: Sequence[RoundResult]) -> list[RoleRates]:
    tallies: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in rounds:
        language = r.language or "all"
        for model in (r.submitter, r.reviewer):
            t = tallies[(model, language)]
            t["rounds"] += 1
            t["draws"] += r.winner == "draw"
        s, v = tallies[(r.submitter, language)], tallies[(r.reviewer, language)]
        s["submitted"] += 1
        s["correct"] += r.patch_correct
        v["reviewed"] += 1
        v["valid"] += r.tests_valid
        if r.tests_valid and r.patch_applies:
            v["chances"] += 1
            v["caught"] += r.tests_catch
    return [
        RoleRates(
            model=model,
            language=language,
            rounds=t["rounds"],
            patch_correct=_share(t["correct"], t["submitted"]),
            tests_valid=_share(t["valid"], t["reviewed"]),
            catch=_share(t["caught"], t["chances"]),
            draw=_share(t["draws"], t["rounds"]),
        )
        for (model, language), t in sorted(tallies.items())
    ]
