"""`arena ci` starts with what its command uses, and nothing of the service, the store or the
ratings: its start-up is most of what `arena ci run` costs beyond a bare `docker run` of the
same steps (bench/ci_overhead.py).

Each command runs in a fresh interpreter against an engine that is not there (DOCKER_HOST names
a missing socket), so it imports all it needs to start a run, then stops with exit 3, and the
modules it loaded are read at its exit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# the rest of Arena and the libraries only it uses
UNUSED_BY_CI = (
    "api",
    "workers",
    "arena.store",
    "arena.ratings",
    "arena.match",
    "cli.play",
    "cli.tasks",
    "cli.service",
    "numpy",
    "scipy",
    "sklearn",
    "fastapi",
    "starlette",
    "uvicorn",
    "celery",
    "kombu",
    "redis",
    "psycopg",
    "httpx",
    "cryptography",
    "bm25s",
)

_RUN = """
import atexit, json, os, sys
atexit.register(lambda: open(os.environ["MODULES_OUT"], "w").write(json.dumps(sorted(sys.modules))))
from cli import main
main()
"""


def _loaded(args: list[str], tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """`arena *args` in a fresh interpreter without an engine; the modules it had loaded."""
    out = tmp_path / "modules.json"
    env = {
        **os.environ,
        "DOCKER_HOST": f"unix://{tmp_path / 'no-engine.sock'}",
        "ARENA_CACHE_DIR": str(tmp_path / "cache"),
        "MODULES_OUT": str(out),
    }
    env.pop("ARENA_SANDBOX_PROVIDER", None)  # the Docker provider, whose engine is missing
    done = subprocess.run(
        [sys.executable, "-c", _RUN, *args], env=env, capture_output=True, text=True, timeout=120
    )
    return done, set(json.loads(out.read_text()))


def _from(modules: set[str], packages: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in packages))


@pytest.fixture
def task_file(tmp_path: Path) -> Path:
    path = tmp_path / "task.json"
    path.write_text(
        json.dumps(
            {
                "instance_id": "calc-1",
                "repo": str(tmp_path / "repo.git"),
                "base_commit": "a" * 40,
                "language": "python",
                "pipeline": {
                    "steps": [{"name": "test", "run": "pytest --junitxml=report.xml"}],
                    "report": {"format": "junit", "path": "report.xml"},
                },
            }
        )
    )
    return path


def test_ci_run_with_json_loads_neither_the_rest_of_arena_nor_the_tables(
    task_file: Path, tmp_path: Path
) -> None:
    done, modules = _loaded(["ci", "run", "--task", str(task_file), "--json"], tmp_path)
    assert done.returncode == 3, done.stderr
    assert "no Docker engine answers" in done.stderr
    assert "cli.ci" in modules and "ci_runner.runner" in modules  # it got that far
    assert _from(modules, UNUSED_BY_CI) == []
    assert "cli.render" not in modules  # the result tables: not for JSON


def test_ci_sweep_loads_no_task_schema(tmp_path: Path) -> None:
    done, modules = _loaded(["ci", "sweep"], tmp_path)
    assert done.returncode == 3, done.stderr
    assert "no Docker engine answers" in done.stderr
    assert _from(modules, ("arena.tasks", "ci_runner.workflows", *UNUSED_BY_CI)) == []
