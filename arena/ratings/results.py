"""The results table: matches as columns of indices, the form the rating maths works on."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from arena.ratings.records import MatchResult

SCORE = {"a": 1.0, "b": 0.0, "tie": 0.5}


@dataclass(frozen=True)
class Results:
    """One row per match: task, model a, model b, and a's score (1 win, 0.5 tie, 0 loss)."""

    models: tuple[str, ...]
    tasks: tuple[str, ...]
    task: npt.NDArray[np.int64]
    a: npt.NDArray[np.int64]
    b: npt.NDArray[np.int64]
    score_a: npt.NDArray[np.float64]

    @classmethod
    def from_matches(
        cls, matches: Iterable[MatchResult], extra_models: Sequence[str] = ()
    ) -> Results:
        """The matches in the order given (Elo replays them so: give them in finish order);
        models and tasks are numbered as they first appear."""
        return cls.from_rows(((m.task, m.a, m.b, m.winner) for m in matches), extra_models)

    @classmethod
    def from_rows(
        cls, rows: Iterable[tuple[str, str, str, str]], extra_models: Sequence[str] = ()
    ) -> Results:
        """Rows of (task, a, b, winner 'a'|'b'|'tie'); extra models may have none."""
        models: dict[str, int] = {m: i for i, m in enumerate(dict.fromkeys(extra_models))}
        tasks: dict[str, int] = {}
        task, a, b, score = [], [], [], []
        for t, ma, mb, winner in rows:
            if ma == mb:
                raise ValueError(f"task {t}: a model cannot play itself ({ma})")
            if winner not in SCORE:
                raise ValueError(f"task {t}: winner must be a, b or tie, not {winner!r}")
            task.append(tasks.setdefault(t, len(tasks)))
            a.append(models.setdefault(ma, len(models)))
            b.append(models.setdefault(mb, len(models)))
            score.append(SCORE[winner])
        return cls(
            models=tuple(models),
            tasks=tuple(tasks),
            task=np.asarray(task, dtype=np.int64),
            a=np.asarray(a, dtype=np.int64),
            b=np.asarray(b, dtype=np.int64),
            score_a=np.asarray(score, dtype=np.float64),
        )

    @property
    def n_models(self) -> int:
        return len(self.models)

    def __len__(self) -> int:
        return int(self.a.size)
