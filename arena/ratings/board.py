"""One board: every number a leaderboard shows of each model, from typed match records.

The command line (`arena ratings`), the workers (stored snapshots) and the API (which serves
those snapshots) all show `BoardRow`s made here, so a column is computed in one place, and a
new one is a field here (with a default, so stored boards without it still load) plus the
place that displays it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from arena.ratings.leaderboard import leaderboard
from arena.ratings.pairing import posterior
from arena.ratings.rates import RateCounts, rate_counts
from arena.ratings.records import MatchResult, finish_order, rounds_of
from arena.ratings.results import Results
from arena.ratings.roles import role_ratings
from arena.ratings.usage import Usage, usage_by_model

# A model with fewer matches than this is provisional: its rating still leans visibly on the
# prior (one virtual tie weighs about as much as one match) and its interval is wide.
PROVISIONAL_MATCHES = 10


class BoardRow(BaseModel):
    """One model's row of a board (a set of matches: a tournament, a language, a kind...)."""

    # stored boards may lack a newer field (its default fills it); responses always carry it
    model_config = ConfigDict(frozen=True, json_schema_serialization_defaults_required=True)

    model: str
    rating: float | None = Field(
        description="Bradley-Terry over matches (mean 1000 per comparable group, weakly"
        " regularised); null without matches. With a role asked of the API: that role's rating"
    )
    ci_low: float | None = Field(description="95% interval (task bootstrap, never narrower"
                                 " than the fit's own); null for a role's rating")  # fmt: skip
    ci_high: float | None
    rank_ub: int | None = Field(description="1 + models surely better (intervals apart)")
    provisional: bool = Field(
        description=f"fewer than {PROVISIONAL_MATCHES} matches: the rating is a first estimate"
    )
    prior_bounded: bool = Field(
        default=False,
        description="the data alone give no finite rating (it won or lost every comparison"
        " in its group): rating and interval come from the prior",
    )
    matches: int
    wins: int
    losses: int
    ties: int
    elo: float = Field(description="online Elo, matches replayed in the order they finished")
    submitter: float | None = Field(description="its rating as submitter (each round is one"
                                    " submitter-vs-reviewer comparison)")  # fmt: skip
    reviewer: float | None = Field(description="its rating as reviewer, on the same scale")
    patch_correct: float | None = Field(description="rounds submitted with the patch correct /"
                                        " rounds_submitted; null: no chances")  # fmt: skip
    rounds_submitted: int
    tests_valid: float | None = Field(description="rounds reviewed with the tests valid /"
                                      " rounds_reviewed; null: no chances")  # fmt: skip
    rounds_reviewed: int
    catch: float | None = Field(
        description="rounds reviewed where its tests caught the patch / wrong_patches_reviewed"
        " (rounds reviewed where the patch applied and was not correct); null: no chances"
    )
    wrong_patches_reviewed: int
    draw: float | None = Field(
        default=None, description="drawn rounds / rounds (played in either role); null: none"
    )
    rounds: int = 0
    usage: Usage | None = Field(
        default=None, description="its answers' tokens and latency, its matches' CI time"
    )
    narrowed: float | None = Field(
        default=None,
        description="points its 95% interval narrowed from the prior's (no matches): what its"
        " matches bought, the denominator of cost per point; null on boards computed before",
    )


@dataclass(frozen=True)
class Board:
    rows: tuple[BoardRow, ...]  # best rated first, models without a rating last
    warnings: tuple[str, ...]  # what the fit could not do well (a model that never lost...)
    match_count: int


def build_board(
    matches: Sequence[MatchResult],
    bootstrap: int = 1000,
    seed: int = 0,
    anchor: tuple[str, float] | None = None,
    elo_k: float = 32.0,
    on_progress: Callable[[int], None] = lambda _: None,
) -> Board:
    """Pure: the board of these matches. They are put in finish order first, so Elo (and
    the bootstrap's numbering of tasks) is the same whichever order a driver read them in."""
    if not matches:
        return Board((), (), 0)
    ordered = finish_order(matches)
    standings, fit = leaderboard(
        Results.from_matches(ordered), bootstrap, seed, anchor, elo_k, on_progress
    )
    rounds = rounds_of(ordered)
    by_role = role_ratings(rounds)[0] if rounds else {}
    counts = rate_counts(rounds)
    used = usage_by_model(ordered)
    prior = prior_widths([s.model for s in standings])
    rows = []
    for s in standings:
        sub, rev = by_role.get(s.model, (math.nan, math.nan))
        c = counts.get(s.model, RateCounts())
        rows.append(
            BoardRow(
                model=s.model,
                rating=s.rating,
                ci_low=s.ci_low,
                ci_high=s.ci_high,
                rank_ub=s.rank_ub,
                provisional=is_provisional(s.matches),
                prior_bounded=s.prior_bounded,
                matches=s.matches,
                wins=s.wins,
                losses=s.losses,
                ties=s.ties,
                elo=s.elo,
                submitter=None if math.isnan(sub) else sub,
                reviewer=None if math.isnan(rev) else rev,
                patch_correct=c.patch_correct,
                rounds_submitted=c.submitted,
                tests_valid=c.tests_valid,
                rounds_reviewed=c.reviewed,
                catch=c.catch,
                wrong_patches_reviewed=c.wrong_patches,
                draw=c.draw,
                rounds=c.rounds,
                usage=used.get(s.model),
                narrowed=None
                if s.ci_low is None or s.ci_high is None
                else max(prior[s.model] - (s.ci_high - s.ci_low), 0.0),
            )
        )
    warnings = (*fit.warnings, *mixed_rules(ordered), *unguarded_tasks(ordered))
    return Board(tuple(rows), warnings, len(matches))


UNVERSIONED = "none (judged before verdicts carried a rules version)"


def mixed_rules(matches: Sequence[MatchResult]) -> tuple[str, ...]:
    """A warning when the board's matches were judged under more than one version of the
    protocol's rules (`arena.protocol.RULES_VERSION`): their verdicts are not alike."""
    versions = Counter(m.rules_version or UNVERSIONED for m in matches)
    if len(versions) < 2:
        return ()
    shown = ", ".join(f"{v} ({n} matches)" for v, n in sorted(versions.items()))
    return (f"this board mixes matches judged under different rules versions: {shown}",)


def unguarded_tasks(matches: Sequence[MatchResult]) -> tuple[str, ...]:
    """A warning naming the board's unguarded tasks: those whose runs of a patch carried no
    tripwire that must fail (C++ today; a pipeline that stops at its first failure), so a
    patch rewriting every result there is seen only by the tripwires that must pass."""
    tasks = sorted({m.task for m in matches if m.unguarded})
    if not tasks:
        return ()
    shown = ", ".join(tasks[:8]) + (f" and {len(tasks) - 8} more" if len(tasks) > 8 else "")
    every = len({m.task for m in matches})
    return (
        f"{len(tasks)} of this board's {every} tasks are unguarded (no tripwire that must fail "
        f"could be planted in their runs): {shown}",
    )


def is_provisional(matches: int) -> bool:
    return matches < PROVISIONAL_MATCHES


def prior_widths(models: Sequence[str]) -> dict[str, float]:
    """Each model's 95% interval width before any match: the fit's prior alone (its virtual
    ties), the width a model starts from on this board."""
    return {i.model: i.width for i in posterior(models, ()).intervals()}
