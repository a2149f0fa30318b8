"""Online Elo (the `elo-rating` package) on the standard base-10, 400-point scale."""

from __future__ import annotations

import math

from elo_rating import Elo

from arena.ratings.results import Results

ELO_DENOMINATOR = 400 / math.log(10)  # e^(d/denom) == 10^(d/400)


def online_elo(results: Results, k: float = 32.0, initial: float = 1000.0) -> dict[str, float]:
    """Ratings after replaying the matches in their order; order matters, unlike BT."""
    elo = Elo(ratings={m: initial for m in results.models}, denom=ELO_DENOMINATOR)
    for a, b, score in zip(
        results.a.tolist(), results.b.tolist(), results.score_a.tolist(), strict=True
    ):
        elo.add_match(results.models[a], results.models[b], score, k=k, default_rating=initial)
    return {m: float(r) for m, r in elo.ratings().items()}
