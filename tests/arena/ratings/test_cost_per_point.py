"""What a model's matches cost and what they bought: CI time per model (a match's runs count
for both its models), and the points its interval narrowed from the prior's, read back from
results files and served per point by the API."""

from __future__ import annotations

import json

import pytest

from arena.ratings.board import build_board, prior_widths
from arena.ratings.records import AnswerUsage, MatchResult
from arena.ratings.results_file import parse_results_lines
from arena.ratings.usage import usage_by_model


def _matches(n: int) -> list[MatchResult]:
    return [
        MatchResult(
            f"t{i}",
            "x" if i % 2 else "y",
            "y" if i % 2 else "z",
            "a" if i % 3 else "tie",
            ci_seconds=10.0,
            answers=(AnswerUsage("x" if i % 2 else "y", 100, 20, 1.0),),
        )
        for i in range(n)
    ]


def test_a_matchs_ci_time_counts_for_both_of_its_models_and_unknown_stays_unknown() -> None:
    used = usage_by_model(
        [
            MatchResult("t1", "x", "y", "a", ci_seconds=30.0),
            MatchResult("t2", "y", "z", "b", ci_seconds=12.5),
            MatchResult("t3", "x", "w", "tie"),  # an old results line: no CI time recorded
        ]
    )
    assert {m: u.ci_seconds for m, u in used.items()} == {"x": 30.0, "y": 42.5, "z": 12.5}
    assert "w" not in used  # neither answers nor CI time: nothing known of its cost
    assert used["x"].answers == 0 and used["x"].prompt_tokens == 0


def test_intervals_narrow_from_the_prior_as_matches_grow() -> None:
    few = {r.model: r for r in build_board(_matches(12), bootstrap=200).rows}
    many = {r.model: r for r in build_board(_matches(120), bootstrap=200).rows}
    prior = prior_widths(["x", "y", "z"])
    for model in ("x", "y", "z"):
        narrowed_few, narrowed_many = few[model].narrowed, many[model].narrowed
        assert narrowed_few is not None and narrowed_many is not None
        assert 0 <= narrowed_few < narrowed_many < prior[model]
        row = many[model]
        assert row.ci_high is not None and row.ci_low is not None
        assert narrowed_many == pytest.approx(prior[model] - (row.ci_high - row.ci_low))


def test_results_files_carry_ci_seconds_and_a_bad_value_is_named() -> None:
    good = {"task": "t", "a": "x", "b": "y", "winner": "a", "ci_seconds": 41.5}
    lines = [json.dumps(good), json.dumps({**good, "task": "u", "ci_seconds": "slow"})]
    parsed = parse_results_lines(lines)
    assert [m.ci_seconds for m in parsed.matches] == [41.5]
    assert parsed.errors == ("line 2: ci_seconds: must be a number of seconds, at least 0",)
