"""Ratings as pure functions from typed match records to a board; no I/O.

`build_board` is the one place every leaderboard number is computed: the command line, the
workers and (through the stored snapshots) the API all show its rows.

Names are loaded on first use (`ci_runner.lazy`): the API and the workers import
`arena.ratings.matrices` or `records` without paying for numpy and scipy (~0.5 s a process).
`leaderboard` (the function) is not among them: its module has the same name, and a submodule,
once imported, takes the package attribute first; import it from `arena.ratings.leaderboard`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ci_runner import lazy_attributes

if TYPE_CHECKING:
    from arena.ratings.board import PROVISIONAL_MATCHES, Board, BoardRow, build_board
    from arena.ratings.bootstrap import bootstrap_ratings
    from arena.ratings.bradley_terry import PRIOR_TIES, BTFit, fit_bradley_terry
    from arena.ratings.elo import online_elo
    from arena.ratings.leaderboard import Standing
    from arena.ratings.matrices import HeadToHead, PairTally, head_to_head, tallies
    from arena.ratings.rates import ModelRates, RateCounts, rate_counts, rates_by_model_and_language
    from arena.ratings.records import AnswerUsage, MatchResult, RoundResult, finish_order
    from arena.ratings.results import Results
    from arena.ratings.roles import role_ratings
    from arena.ratings.usage import Usage

_HOMES = {
    "PROVISIONAL_MATCHES": "arena.ratings.board",
    "Board": "arena.ratings.board",
    "BoardRow": "arena.ratings.board",
    "build_board": "arena.ratings.board",
    "bootstrap_ratings": "arena.ratings.bootstrap",
    "PRIOR_TIES": "arena.ratings.bradley_terry",
    "BTFit": "arena.ratings.bradley_terry",
    "fit_bradley_terry": "arena.ratings.bradley_terry",
    "online_elo": "arena.ratings.elo",
    "Standing": "arena.ratings.leaderboard",
    "HeadToHead": "arena.ratings.matrices",
    "PairTally": "arena.ratings.matrices",
    "head_to_head": "arena.ratings.matrices",
    "tallies": "arena.ratings.matrices",
    "ModelRates": "arena.ratings.rates",
    "RateCounts": "arena.ratings.rates",
    "rate_counts": "arena.ratings.rates",
    "rates_by_model_and_language": "arena.ratings.rates",
    "AnswerUsage": "arena.ratings.records",
    "MatchResult": "arena.ratings.records",
    "RoundResult": "arena.ratings.records",
    "finish_order": "arena.ratings.records",
    "Results": "arena.ratings.results",
    "role_ratings": "arena.ratings.roles",
    "Usage": "arena.ratings.usage",
}

__all__ = [
    "PRIOR_TIES",
    "PROVISIONAL_MATCHES",
    "AnswerUsage",
    "BTFit",
    "Board",
    "BoardRow",
    "HeadToHead",
    "MatchResult",
    "ModelRates",
    "PairTally",
    "RateCounts",
    "Results",
    "RoundResult",
    "Standing",
    "Usage",
    "bootstrap_ratings",
    "build_board",
    "finish_order",
    "fit_bradley_terry",
    "head_to_head",
    "online_elo",
    "rate_counts",
    "rates_by_model_and_language",
    "role_ratings",
    "tallies",
]

__getattr__ = lazy_attributes(__name__, _HOMES)
