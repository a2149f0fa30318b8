"""Absolute rates per model, each with its denominator, as the swing protocol defines them:

- patch correct = rounds submitted with P correct / rounds submitted;
- tests valid = rounds reviewed with T valid / rounds reviewed;
- catch = rounds reviewed where T caught P / rounds reviewed where P applied and was not
  correct (the chances to catch: a correct patch cannot be caught, one that did not apply
  has nothing to catch);
- draw = drawn rounds / rounds played (in either role).

A rate whose denominator is 0 is None ("no chances"): never NaN, never 0.0, which would read
as a model that failed every chance it had.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from arena.ratings.records import RoundResult


def share(hits: int, chances: int) -> float | None:
    """hits / chances, or None when there were no chances."""
    return hits / chances if chances else None


@dataclass(frozen=True)
class RateCounts:
    """The counts behind one model's rates (of one set of rounds)."""

    rounds: int = 0  # rounds played, as submitter or reviewer
    draws: int = 0
    submitted: int = 0
    correct: int = 0
    reviewed: int = 0
    valid: int = 0
    wrong_patches: int = 0  # reviewed rounds whose patch applied and was not correct
    caught: int = 0  # of those, the ones whose tests caught the patch

    @property
    def patch_correct(self) -> float | None:
        return share(self.correct, self.submitted)

    @property
    def tests_valid(self) -> float | None:
        return share(self.valid, self.reviewed)

    @property
    def catch(self) -> float | None:
        return share(self.caught, self.wrong_patches)

    @property
    def draw(self) -> float | None:
        return share(self.draws, self.rounds)


def rate_counts(rounds: Iterable[RoundResult]) -> dict[str, RateCounts]:
    """Per model, the counts behind its rates over these rounds."""
    tallies: dict[str, Counter[str]] = defaultdict(Counter)
    for r in rounds:
        for model in (r.submitter, r.reviewer):
            tallies[model]["rounds"] += 1
            tallies[model]["draws"] += r.winner == "draw"
        sub, rev = tallies[r.submitter], tallies[r.reviewer]
        sub["submitted"] += 1
        sub["correct"] += r.patch_correct
        rev["reviewed"] += 1
        rev["valid"] += r.tests_valid
        if r.patch_applies and not r.patch_correct:
            rev["wrong_patches"] += 1
            rev["caught"] += r.tests_valid and r.tests_catch
    return {model: RateCounts(**counts) for model, counts in tallies.items()}


@dataclass(frozen=True)
class ModelRates:
    model: str
    language: str  # "all" for rounds whose language is not known
    counts: RateCounts


def rates_by_model_and_language(rounds: Iterable[RoundResult]) -> list[ModelRates]:
    """The counts per model within each language, sorted by model then language."""
    by_language: dict[str, list[RoundResult]] = defaultdict(list)
    for r in rounds:
        by_language[r.language or "all"].append(r)
    return sorted(
        (
            ModelRates(model, language, counts)
            for language, some in by_language.items()
            for model, counts in rate_counts(some).items()
        ),
        key=lambda x: (x.model, x.language),
    )
