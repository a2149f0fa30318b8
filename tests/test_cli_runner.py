"""The in-process `arena` (tests/command.py) answers as the installed script does: same exit code,
same output, same environment rules. Most command tests rely on it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.command import ARENA, WIDTH, run_arena


def _as_a_process(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ARENA, *args], env={**env, "COLUMNS": WIDTH}, capture_output=True, text=True, timeout=120
    )


def test_output_and_exit_codes_match_the_installed_script(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    rows = [{"task": f"t{t}", "a": "x", "b": "y", "winner": "a" if t % 3 else "tie"}
            for t in range(6)]  # fmt: skip
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = dict(os.environ)
    for args in (
        ["ratings", "--results", str(results), "--bootstrap", "20", "--json"],
        ["ratings", "--results", str(results), "--bootstrap", "20"],  # a rich table
        ["ratings", "--results", str(tmp_path / "absent.jsonl")],  # exit 2, a message
        ["ratings", "--bootstrap", "many"],  # click's usage error
    ):
        inside, outside = run_arena(args, env), _as_a_process(args, env)
        assert (inside.returncode, inside.stdout, inside.stderr) == (
            outside.returncode,
            outside.stdout,
            outside.stderr,
        ), args


def test_the_environment_is_this_process_s_again_after_a_call(tmp_path: Path) -> None:
    os.environ["ARENA_TEST_LEFT_OUT"] = "1"
    try:
        env = {k: v for k, v in os.environ.items() if k != "ARENA_TEST_LEFT_OUT"}
        cache = str(tmp_path / "elsewhere")
        done = run_arena(["tasks", "list", "--help"], {**env, "ARENA_CACHE_DIR": cache})
        assert done.returncode == 0 and "Usage: arena tasks list" in done.stdout
        assert os.environ["ARENA_TEST_LEFT_OUT"] == "1"
        assert os.environ.get("ARENA_CACHE_DIR") != cache
    finally:
        del os.environ["ARENA_TEST_LEFT_OUT"]
