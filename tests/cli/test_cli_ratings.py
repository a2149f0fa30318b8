"""`arena ratings` on a results file, as a user runs it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.command import run_arena


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return run_arena(["ratings", *args])


def _results(path: Path) -> Path:
    lines = []
    for t in range(12):
        lines.append(
            {
                "task": f"t{t}",
                "a": "strong",
                "b": "weak",
                "winner": "a" if t % 4 else "tie",
                "language": "go",
                "rounds": [
                    {
                        "submitter": "strong",
                        "reviewer": "weak",
                        "winner": "submitter",
                        "patch_correct": True,
                    },
                    {
                        "submitter": "weak",
                        "reviewer": "strong",
                        "winner": "reviewer",
                        "tests_valid": True,
                    },
                ],
            }
        )
        lines.append({"task": f"t{t}", "a": "mid", "b": "weak", "winner": "a" if t % 3 else "b"})
        lines.append({"task": f"t{t}", "a": "strong", "b": "mid", "winner": "a" if t % 2 else "b"})
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path


def test_json_leaderboard(tmp_path: Path) -> None:
    done = _run("--results", str(_results(tmp_path / "r.jsonl")), "--json", "--bootstrap", "100")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [r["model"] for r in rows] == ["strong", "mid", "weak"]
    assert {"model", "rating", "ci_low", "ci_high", "rank_ub", "matches"} <= set(rows[0])
    assert rows[0]["ci_low"] <= rows[0]["rating"] <= rows[0]["ci_high"]
    assert rows[0]["matches"] == 24 and rows[0]["rank_ub"] == 1


def test_table_shows_ratings_roles_and_rates(tmp_path: Path) -> None:
    done = _run("--results", str(_results(tmp_path / "r.jsonl")), "--bootstrap", "50")
    assert done.returncode == 0, done.stderr
    for text in (
        "Bradley-Terry ratings",
        "95% CI",
        "rank (UB)",
        "W/L/T",
        "role ratings",
        "rates per model",
    ):
        assert text in done.stdout


def test_bad_lines_exit_2_naming_line_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"task": "t", "a": "x", "b": "y", "winner": "a"}\n{"task": "t", "a": "x", "winner": "a"}\n'
        '{"task": "t", "a": "x", "b": "y", "winner": "maybe"}\n'
    )
    done = _run("--results", str(bad))
    assert done.returncode == 2
    assert "line 2: b: missing" in done.stderr and "line 3: winner" in done.stderr
    assert _run("--results", str(tmp_path / "absent.jsonl")).returncode == 2


def test_a_rate_without_chances_is_said_never_nan_or_zero(tmp_path: Path) -> None:
    # weak's patches were never wrong-and-applied under strong's review, and strong never
    # reviewed a wrong patch: strong has no chance to catch
    path = _results(tmp_path / "r.jsonl")
    table = _run("--results", str(path), "--bootstrap", "20")
    assert table.returncode == 0, table.stderr
    assert "nan" not in table.stdout and "no chances" in table.stdout
    done = _run("--results", str(path), "--json", "--bootstrap", "20")
    rows = {r["model"]: r for r in json.loads(done.stdout)}
    assert rows["strong"]["catch"] is None and rows["strong"]["wrong_patches_reviewed"] == 0
    assert rows["strong"]["patch_correct"] == 1.0 and rows["strong"]["rounds_submitted"] == 12
    assert rows["weak"]["tests_valid"] == 0.0 and rows["weak"]["rounds_reviewed"] == 12
    assert rows["mid"]["rounds"] == 0 and rows["mid"]["draw"] is None  # no rounds recorded


def test_a_scope_of_one_language_rates_only_its_matches(tmp_path: Path) -> None:
    done = _run(
        "--results", str(_results(tmp_path / "r.jsonl")), "--json", "--bootstrap", "20",
        "--language", "go",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert {r["model"] for r in rows} == {"strong", "weak"}  # mid's matches carry no language
    assert all(r["matches"] == 12 and not r["provisional"] for r in rows)
    empty = _run("--results", str(tmp_path / "r.jsonl"), "--language", "rust")
    assert empty.returncode == 2 and "no match results" in empty.stderr
