"""Ratings as pure functions from typed match records to a board; no I/O.

`build_board` is the one place every leaderboard number is computed: the command line, the
workers and (through the stored snapshots) the API all show its rows."""

from arena.ratings.board import PROVISIONAL_MATCHES, Board, BoardRow, build_board
from arena.ratings.bootstrap import bootstrap_ratings
from arena.ratings.bradley_terry import PRIOR_TIES, BTFit, fit_bradley_terry
from arena.ratings.elo import online_elo
from arena.ratings.leaderboard import Standing, leaderboard
from arena.ratings.matrices import HeadToHead, PairTally, head_to_head, tallies
from arena.ratings.rates import ModelRates, RateCounts, rate_counts, rates_by_model_and_language
from arena.ratings.records import AnswerUsage, MatchResult, RoundResult, finish_order
from arena.ratings.results import Results
from arena.ratings.roles import role_ratings
from arena.ratings.usage import Usage

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
    "leaderboard",
    "online_elo",
    "rate_counts",
    "rates_by_model_and_language",
    "role_ratings",
    "tallies",
]
