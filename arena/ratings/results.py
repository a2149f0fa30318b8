"""The results table: matches as columns of indices, and rounds with their facts."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

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
    language: tuple[str | None, ...] = ()

    @classmethod
    def from_rows(
        cls,
        rows: Iterable[tuple[str, str, str, str]] | Iterable[tuple[str, str, str, str, str | None]],
        extra_models: Sequence[str] = (),
    ) -> Results:
        """Rows of (task, a, b, winner 'a'|'b'|'tie'[, language]); extra models may have none."""
        models: dict[str, int] = {m: i for i, m in enumerate(dict.fromkeys(extra_models))}
        tasks: dict[str, int] = {}
        task, a, b, score, language = [], [], [], [], []
        for row in rows:
            t, ma, mb, winner = row[:4]
            if ma == mb:
                raise ValueError(f"task {t}: a model cannot play itself ({ma})")
            if winner not in SCORE:
                raise ValueError(f"task {t}: winner must be a, b or tie, not {winner!r}")
            task.append(tasks.setdefault(t, len(tasks)))
            a.append(models.setdefault(ma, len(models)))
            b.append(models.setdefault(mb, len(models)))
            score.append(SCORE[winner])
            language.append(row[4] if len(row) > 4 else None)
        return cls(
            models=tuple(models),
            tasks=tuple(tasks),
            task=np.asarray(task, dtype=np.int64),
            a=np.asarray(a, dtype=np.int64),
            b=np.asarray(b, dtype=np.int64),
            score_a=np.asarray(score, dtype=np.float64),
            language=tuple(language),
        )

    @property
    def n_models(self) -> int:
        return len(self.models)

    def __len__(self) -> int:
        return int(self.a.size)


@dataclass(frozen=True)
class RoundResult:
    """One round: a submitter against a reviewer, with the facts of the protocol."""

    task: str
    submitter: str
    reviewer: str
    winner: str  # "submitter", "reviewer" or "draw"
    patch_applies: bool = False
    patch_correct: bool = False
    tests_valid: bool = False
    tests_catch: bool = False
    language: str | None = None
    kind: str | None = None


@dataclass(frozen=True)
class ParsedResults:
    matches: Results
    rounds: tuple[RoundResult, ...]
    errors: tuple[str, ...]
    failed: int = 0  # matches that infrastructure kept from finishing: never rated


_ROUND_FACTS = ("patch_applies", "patch_correct", "tests_valid", "tests_catch")
_ROUND_WINNERS = ("submitter", "reviewer", "draw")


def parse_results_lines(lines: Iterable[str]) -> ParsedResults:
    """JSONL match results ({task, a, b, winner[, language][, kind][, rounds]}), as
    `MatchRecord.summary()` writes them; lines of failed matches ({..., failed}) are counted.

    Each bad line becomes an error naming the line and the field."""
    rows: list[tuple[str, str, str, str, str | None]] = []
    rounds: list[RoundResult] = []
    errors: list[str] = []
    failed = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(f"line {number}: not JSON ({exc.msg})")
            continue
        if not isinstance(record, dict):
            errors.append(f"line {number}: not a JSON object")
            continue
        if "failed" in record:
            failed += 1
            continue
        missing = [k for k in ("task", "a", "b", "winner") if not isinstance(record.get(k), str)]
        if missing:
            errors.append(f"line {number}: {', '.join(missing)}: missing or not a string")
            continue
        if record["winner"] not in SCORE:
            errors.append(f"line {number}: winner: must be a, b or tie, not {record['winner']!r}")
            continue
        if record["a"] == record["b"]:
            errors.append(f"line {number}: b: a model cannot play itself")
            continue
        language = record.get("language")
        kind = record.get("kind")
        rows.append((record["task"], record["a"], record["b"], record["winner"], language))
        for played in record.get("rounds") or []:
            if not isinstance(played, dict) or played.get("winner") not in _ROUND_WINNERS:
                errors.append(
                    f"line {number}: rounds: each needs submitter, reviewer and a winner of "
                    f"{', '.join(_ROUND_WINNERS)}"
                )
                continue
            try:
                rounds.append(
                    RoundResult(
                        task=record["task"],
                        submitter=str(played["submitter"]),
                        reviewer=str(played["reviewer"]),
                        winner=str(played["winner"]),
                        language=language,
                        kind=kind,
                        **{k: bool(played.get(k, False)) for k in _ROUND_FACTS},
                    )
                )
            except KeyError as exc:
                errors.append(f"line {number}: rounds: needs submitter and reviewer ({exc})")
    return ParsedResults(Results.from_rows(rows), tuple(rounds), tuple(errors), failed)
