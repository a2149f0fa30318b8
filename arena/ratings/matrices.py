"""Head to head: the win fraction (ties left out) and the match count of every pair.

Built from tallies (a, b, winner, count) so the service can count in SQL and the command line
from its records, and both get the same matrix from the same function."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from arena.ratings.records import MatchResult, MatchWinner


@dataclass(frozen=True)
class PairTally:
    """`count` matches of a against b that ended with `winner`."""

    a: str
    b: str
    winner: MatchWinner
    count: int = 1


@dataclass(frozen=True)
class HeadToHead:
    """`win_fraction[i][j]`: the share of decisive i-vs-j matches that i won (None: none was
    decisive); `matches[i][j]`: matches between i and j in either order. Models sorted."""

    models: tuple[str, ...]
    win_fraction: tuple[tuple[float | None, ...], ...]
    matches: tuple[tuple[int, ...], ...]


def tallies(matches: Iterable[MatchResult]) -> list[PairTally]:
    """The records counted by (a, b, winner)."""
    counted = Counter((m.a, m.b, m.winner) for m in matches)
    return [PairTally(a, b, winner, n) for (a, b, winner), n in counted.items()]


def head_to_head(found: Iterable[PairTally]) -> HeadToHead:
    found = list(found)
    models = tuple(sorted({t.a for t in found} | {t.b for t in found}))
    index = {m: i for i, m in enumerate(models)}
    n = len(models)
    wins = [[0] * n for _ in range(n)]
    games = [[0] * n for _ in range(n)]
    for t in found:
        i, j = index[t.a], index[t.b]
        games[i][j] += t.count
        games[j][i] += t.count
        if t.winner == "a":
            wins[i][j] += t.count
        elif t.winner == "b":
            wins[j][i] += t.count
    fractions = tuple(
        tuple(
            None if wins[i][j] + wins[j][i] == 0 else wins[i][j] / (wins[i][j] + wins[j][i])
            for j in range(n)
        )
        for i in range(n)
    )
    return HeadToHead(models, fractions, tuple(tuple(row) for row in games))
