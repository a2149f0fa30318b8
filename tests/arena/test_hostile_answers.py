"""A model's files never void the match it is losing: whatever tree its patch or tests make,
what Arena cannot handle in it is the code's doing (issue: a wrong patch adding one file
1,000 folders deep crashed the tripwire planter, and the match left the board)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_runner import CISettings
from tests.arena.scripted_server import WRONG_AND_DEEP, Reply, scripted_server
from tests.command import run_arena

pytestmark = pytest.mark.docker


def test_a_patch_with_a_tree_arena_cannot_walk_loses_and_voids_nothing(
    ci_settings: CISettings, images: dict[str, str], tmp_path: Path
) -> None:
    with scripted_server([], default=Reply(content=WRONG_AND_DEEP)) as hostile:
        models = tmp_path / "models.yaml"
        models.write_text(
            f"models:\n  - name: hostile\n    base_url: {hostile.url}/v1\n    model: m\n"
        )
        play = ["play", "--task", "demo__py-textkit-slug", "--a", "hostile", "--b", "oracle"]
        done = run_arena(
            [*play, "--models-file", str(models), "--json"],
            ARENA_CACHE_DIR=str(ci_settings.cache_dir),
        )
    assert done.returncode == 0, done.stdout + done.stderr
    match = json.loads(done.stdout)
    assert match["result"] == "oracle", match
    assert match["score"] == {"hostile": 0, "oracle": 2}, match


def test_an_endpoint_reporting_impossible_usage_answers_nothing_and_spends_nothing(
    ci_settings: CISettings, images: dict[str, str], tmp_path: Path
) -> None:
    """Usage no request could have used (negative, past max_tokens) once made budgets
    unreachable and failed matches as infrastructure: it is the model's own failure, an
    answer of nothing that names the field, and no token of it is counted."""
    usage = '{"prompt_tokens": -8000000000, "completion_tokens": 2000000000}'
    lying = Reply(content="I could not find the bug.", usage=usage)
    evidence = tmp_path / "evidence"
    with scripted_server([], default=lying) as hostile:
        models = tmp_path / "models.yaml"
        models.write_text(
            f"models:\n  - name: hostile\n    base_url: {hostile.url}/v1\n    model: m\n"
        )
        play = ["play", "--task", "demo__py-textkit-slug", "--a", "hostile", "--b", "oracle"]
        done = run_arena(
            [*play, "--models-file", str(models), "--json", "--evidence", str(evidence)],
            ARENA_CACHE_DIR=str(ci_settings.cache_dir),
        )
    assert done.returncode == 0, done.stdout + done.stderr
    match = json.loads(done.stdout)
    assert match["score"] == {"hostile": 0, "oracle": 2}, match
    said = "\n".join(p.read_text() for p in sorted(evidence.rglob("*")) if p.is_file())
    assert "usage.prompt_tokens = -8000000000 is out of range" in said
    assert hostile.requests  # it was asked, and its answers were refused
