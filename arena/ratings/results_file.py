"""Results files (JSONL) read into typed match records, each bad line named with its field.

One line per match, as `arena tournament --results` appends them and `GET /api/results.jsonl`
streams them: `{task, a, b, winner[, language][, kind][, rounds][, finished_at][, match]
[, ci_seconds]}`;
lines of failed matches (`{..., failed}`) are counted and never rated.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from arena.ratings.records import (
    MATCH_WINNERS,
    ROUND_WINNERS,
    MatchResult,
    RoundResult,
    rounds_of,
)

_ROUND_FACTS = ("patch_applies", "patch_correct", "tests_valid", "tests_catch")


@dataclass(frozen=True)
class ParsedResults:
    matches: tuple[MatchResult, ...]
    errors: tuple[str, ...]
    failed: int = 0  # matches that infrastructure kept from finishing: never rated

    @property
    def rounds(self) -> tuple[RoundResult, ...]:
        return tuple(rounds_of(self.matches))


class _BadLine(ValueError):
    """A line that cannot be a match record; the message names the field."""


def parse_results_lines(lines: Iterable[str]) -> ParsedResults:
    """Every good line as a match record; each bad line becomes an error naming the line and
    the field, so a user can fix the file."""
    matches: list[MatchResult] = []
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
        try:
            match, bad_rounds = _match(record)
        except _BadLine as exc:
            errors.append(f"line {number}: {exc}")
            continue
        errors.extend(f"line {number}: {e}" for e in bad_rounds)
        matches.append(match)
    return ParsedResults(tuple(matches), tuple(errors), failed)


def _match(record: dict[str, Any]) -> tuple[MatchResult, list[str]]:
    missing = [k for k in ("task", "a", "b", "winner") if not isinstance(record.get(k), str)]
    if missing:
        raise _BadLine(f"{', '.join(missing)}: missing or not a string")
    if record["winner"] not in MATCH_WINNERS:
        raise _BadLine(f"winner: must be a, b or tie, not {record['winner']!r}")
    if record["a"] == record["b"]:
        raise _BadLine("b: a model cannot play itself")
    language, kind = _optional_text(record, "language"), _optional_text(record, "kind")
    rounds: list[RoundResult] = []
    errors: list[str] = []
    for played in record.get("rounds") or []:
        if not isinstance(played, dict) or played.get("winner") not in ROUND_WINNERS:
            errors.append(
                "rounds: each needs submitter, reviewer and a winner of " + ", ".join(ROUND_WINNERS)
            )
            continue
        if not isinstance(played.get("submitter"), str) or not isinstance(
            played.get("reviewer"), str
        ):
            errors.append("rounds: needs submitter and reviewer")
            continue
        rounds.append(
            RoundResult(
                task=record["task"],
                submitter=played["submitter"],
                reviewer=played["reviewer"],
                winner=played["winner"],
                language=language,
                kind=kind,
                **{k: bool(played.get(k, False)) for k in _ROUND_FACTS},
            )
        )
    ci_seconds = record.get("ci_seconds")
    if ci_seconds is not None and (
        not isinstance(ci_seconds, int | float) or isinstance(ci_seconds, bool) or ci_seconds < 0
    ):
        raise _BadLine("ci_seconds: must be a number of seconds, at least 0")
    match_id = record.get("match")
    if match_id is not None and (not isinstance(match_id, int) or isinstance(match_id, bool)):
        raise _BadLine("match: must be an integer id")
    return (
        MatchResult(
            task=record["task"],
            a=record["a"],
            b=record["b"],
            winner=record["winner"],
            language=language,
            kind=kind,
            rounds=tuple(rounds),
            finished_at=_finished_at(record.get("finished_at")),
            match_id=match_id,
            ci_seconds=None if ci_seconds is None else float(ci_seconds),
            rules_version=_optional_text(record, "rules_version"),
            unguarded=_flag(record, "unguarded"),
        ),
        errors,
    )


def _flag(record: dict[str, Any], key: str) -> bool:
    value = record.get(key, False)
    if not isinstance(value, bool):
        raise _BadLine(f"{key}: must be true or false")
    return value


def _optional_text(record: dict[str, Any], key: str) -> str | None:
    value = record.get(key)
    if value is not None and not isinstance(value, str):
        raise _BadLine(f"{key}: must be a string")
    return value


def _finished_at(value: object) -> dt.datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise _BadLine("finished_at: must be an ISO 8601 time")
    try:
        return dt.datetime.fromisoformat(value)
    except ValueError as exc:
        raise _BadLine(f"finished_at: not an ISO 8601 time ({value!r})") from exc
