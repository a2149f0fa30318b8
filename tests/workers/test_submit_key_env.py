"""`arena submit` registers a models file's models in the service: their api_key_env is held
to the service's rule (a model key's variable, never a service secret), before anything is
stored."""

from __future__ import annotations

from pathlib import Path

import psycopg
import yaml

from ci_runner import CISettings
from tests.command import run_arena
from tests.workers.conftest import tasks_file


def test_submit_refuses_a_models_file_naming_a_service_secret_as_a_key(
    service_env: dict[str, str], ci_settings: CISettings, tmp_path: Path
) -> None:
    spec = str(tasks_file(tmp_path / "tasks.jsonl", ci_settings.cache_dir,
                          ["demo__py-textkit-slug"]))  # fmt: skip
    assert run_arena(["db", "migrate"], service_env).returncode == 0
    for variable, allowed in (("ARENA_SECRET_KEY", False), ("ARENA_MODEL_KEY_M1", True)):
        models_file = tmp_path / "m.yaml"
        models_file.write_text(yaml.safe_dump({"models": [
            {"name": "m1", "base_url": "http://127.0.0.1:9/v1", "model": "x",
             "api_key_env": variable}]}))  # fmt: skip
        env = {**service_env, "ARENA_SECRET_KEY": "the-secret-key-of-the-service"}
        submitted = run_arena(["submit", "--tasks", spec, "--models", "m1,oracle",
                           "--models-file", str(models_file)], env)  # fmt: skip
        if allowed:
            assert submitted.returncode == 0, submitted.stderr
            continue
        assert submitted.returncode == 2
        assert f"model m1: {variable} may not be read: api_key_env must name" in submitted.stderr
        assert "the-secret-key-of-the-service" not in submitted.stderr + submitted.stdout
        with psycopg.connect(service_env["ARENA_DATABASE_URL"]) as conn:
            assert conn.execute("SELECT count(*) FROM tournaments").fetchone() == (0,)
