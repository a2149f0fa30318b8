"""Ratings as pure functions from a table of results to a table of ratings; no I/O."""

from arena.ratings.bootstrap import bootstrap_ratings
from arena.ratings.bradley_terry import BTFit, fit_bradley_terry
from arena.ratings.elo import online_elo
from arena.ratings.leaderboard import LeaderboardRow, leaderboard
from arena.ratings.matrices import battle_counts, win_fractions
from arena.ratings.rates import RoleRates, rates_by_model_and_language
from arena.ratings.results import Results, RoundResult
from arena.ratings.roles import role_ratings

__all__ = [
    "BTFit",
    "LeaderboardRow",
    "Results",
    "RoleRates",
    "RoundResult",
    "battle_counts",
    "bootstrap_ratings",
    "fit_bradley_terry",
    "leaderboard",
    "online_elo",
    "rates_by_model_and_language",
    "role_ratings",
    "win_fractions",
]
