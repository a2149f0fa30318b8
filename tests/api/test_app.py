"""The app around the routes: health, a local demo, the website at /."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from api.core.config import ApiSettings
from api.main import create_app
from ci_runner import CISettings


def test_health_is_503_with_a_reason_when_no_worker_serves_a_queue(client: TestClient) -> None:
    shown = client.get("/api/health")
    assert shown.status_code == 503
    body = shown.json()
    assert body["status"] == "down" and body["postgres"]["ok"] and body["redis"]["ok"]
    assert {q: (c["ok"], c["reason"]) for q, c in body["queues"].items()} == {
        "control": (False, "no worker"),
        "llm": (False, "no worker"),
        "ci": (False, "no worker"),
    }


def test_a_local_demo_takes_writes_without_a_token_but_stores_no_key(
    api_settings: ApiSettings, ci_settings: CISettings
) -> None:
    demo = api_settings.model_copy(update={"demo": True, "admin_token": None, "secret_key": None})
    model = {"name": "m1", "base_url": "http://127.0.0.1:9/v1", "model": "x"}
    with TestClient(create_app(demo, ci_settings)) as client:
        assert client.post("/api/models", json=model).status_code == 201
        keyed = client.post("/api/models", json={**model, "name": "m2", "api_key": "sk-1"})
        assert keyed.status_code == 422
        assert keyed.json()["detail"][0]["loc"] == ["body", "api_key"]
        assert "ARENA_SECRET_KEY" in keyed.json()["detail"][0]["msg"]


def test_the_built_website_is_served_at_the_root_beside_the_api(
    api_settings: ApiSettings, ci_settings: CISettings, tmp_path: Path
) -> None:
    site = tmp_path / "dist"
    (site / "assets").mkdir(parents=True)
    (site / "index.html").write_text("<!doctype html><title>Arena</title>")
    (site / "assets" / "app.js").write_text("console.log('arena')")
    with_site = api_settings.model_copy(update={"web_dir": site})
    with TestClient(create_app(with_site, ci_settings)) as client:
        assert "<title>Arena</title>" in client.get("/").text
        assert client.get("/assets/app.js").text == "console.log('arena')"
        assert "<title>Arena</title>" in client.get("/matches/12?tab=runs").text  # deep link
        assert client.get("/api/models").status_code == 200
        assert client.get("/api/nothing-here").status_code == 404
        assert client.get("/api/openapi.json").json()["info"]["title"] == "Arena"
