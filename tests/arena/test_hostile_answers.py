"""A model's files never void the match it is losing: whatever tree its patch or tests make,
what Arena cannot handle in it is the code's doing (issue: a wrong patch adding one file
1,000 folders deep crashed the tripwire planter, and the match left the board)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_runner import CISettings
from tests.arena.scripted_server import Reply, scripted_server
from tests.cli import run_arena

pytestmark = pytest.mark.docker

DEEP = "/".join(["d"] * 1000) + "/x.py"
WRONG_AND_DEEP = (
    "My fix.\n\n```diff\n"
    f"diff --git a/{DEEP} b/{DEEP}\nnew file mode 100644\n--- /dev/null\n+++ b/{DEEP}\n"
    "@@ -0,0 +1 @@\n+x = 1\n```\n"
)


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
