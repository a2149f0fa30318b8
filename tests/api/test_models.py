"""Models through the API: writes need the token, keys go in encrypted and never come out."""

from __future__ import annotations

import psycopg
from fastapi.testclient import TestClient

from api.core.config import ApiSettings
from tests.api.conftest import ADMIN
from tests.arena.scripted_server import Reply, scripted_server

CANARY = "sk-CANARY-7f3a9d1e-never-show-me"


def _model(name: str = "m1", **extra: object) -> dict[str, object]:
    return {"name": name, "base_url": "http://127.0.0.1:9/v1", "model": "x", **extra}


def test_the_baselines_exist_from_the_start(client: TestClient) -> None:
    shown = client.get("/api/models").json()["models"]
    assert {m["name"]: m["kind"] for m in shown} == {
        "null": "baseline",
        "oracle": "baseline",
        "partial": "baseline",
    }


def test_writes_without_or_with_a_wrong_token_are_refused_and_change_nothing(
    client: TestClient,
) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic eDp5"}):
        refused = client.post("/api/models", json=_model(), headers=headers)
        assert refused.status_code == 401, refused.text
        assert refused.json()["detail"][0]["loc"] == ["header", "Authorization"]
        assert client.delete("/api/models/oracle", headers=headers).status_code == 401
        assert client.post("/api/tournaments", json={"models": ["oracle", "null"]},
                           headers=headers).status_code == 401  # fmt: skip
    assert client.get("/api/models/m1").status_code == 404
    assert client.get("/api/models/oracle").json()["retired"] is False
    assert client.get("/api/tournaments").json()["total"] == 0


def test_a_registered_key_is_encrypted_and_never_returned(
    client: TestClient, api_settings: ApiSettings
) -> None:
    created = client.post(
        "/api/models",
        json=_model(api_key=CANARY, organization="Acme", license="MIT", open_weights=True,
                    release_date="2025-01-02", knowledge_cutoff="2024-06-01",
                    price_input_per_mtok=1.5, price_output_per_mtok=6),
        headers=ADMIN,
    )  # fmt: skip
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["has_api_key"] is True and body["organization"] == "Acme"
    assert body["release_date"] == "2025-01-02" and body["price_output_per_mtok"] == 6
    seen = [created.text]
    seen.append(client.get("/api/models").text)
    seen.append(client.get("/api/models/m1").text)
    patched = client.patch("/api/models/m1", json={"temperature": 0.5}, headers=ADMIN)
    assert patched.status_code == 200 and patched.json()["temperature"] == 0.5
    assert patched.json()["has_api_key"] is True
    seen.append(patched.text)
    bad = client.post("/api/models", json={**_model("m2", api_key=CANARY), "temperature": 9},
                      headers=ADMIN)  # fmt: skip
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["body", "temperature"]
    seen.append(bad.text)
    duplicate = client.post("/api/models", json=_model(api_key=CANARY), headers=ADMIN)
    assert duplicate.status_code == 409 and duplicate.json()["detail"][0]["loc"] == ["body", "name"]
    seen.append(duplicate.text)
    assert not [text for text in seen if CANARY in text]
    assert CANARY not in database_text(api_settings.database_url)
    removed = client.patch("/api/models/m1", json={"api_key": None}, headers=ADMIN)
    assert removed.json()["has_api_key"] is False


def database_text(url: str) -> str:
    """Every row of every table, as text: what a leak would have to show up in."""
    with psycopg.connect(url) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        )]  # fmt: skip
        return "\n".join(
            str(row[0])
            for table in tables
            for row in conn.execute(f"SELECT row_to_json(t)::text FROM {table} t")
        )


def test_retiring_keeps_the_model_and_its_name(client: TestClient) -> None:
    assert client.post("/api/models", json=_model(), headers=ADMIN).status_code == 201
    retired = client.delete("/api/models/m1", headers=ADMIN)
    assert retired.status_code == 200 and retired.json()["retired"] is True
    assert "m1" not in [m["name"] for m in client.get("/api/models").json()["models"]]
    everyone = client.get("/api/models", params={"include_retired": True}).json()["models"]
    assert "m1" in [m["name"] for m in everyone]
    again = client.post("/api/models", json=_model(), headers=ADMIN)
    assert again.status_code == 409
    played = client.post("/api/tournaments", json={"models": ["m1", "oracle"]}, headers=ADMIN)
    assert played.status_code == 422 and "retired" in played.json()["detail"][0]["msg"]


def test_check_sends_one_tiny_request_and_says_what_failed(client: TestClient) -> None:
    with scripted_server([Reply(content="OK")]) as endpoint:
        good = client.post("/api/models", params={"check": True},
                           json=_model(base_url=endpoint.url, api_key=CANARY), headers=ADMIN)  # fmt: skip
        assert good.status_code == 201, good.text
        assert len(endpoint.requests) == 1 and endpoint.auth == [f"Bearer {CANARY}"]
    with scripted_server([Reply(status=401, body='{"error": "bad key"}')]) as endpoint:
        refused = client.post("/api/models", params={"check": True},
                              json=_model("m2", base_url=endpoint.url, api_key=CANARY),
                              headers=ADMIN)  # fmt: skip
    assert refused.status_code == 422
    assert refused.json()["detail"][0]["loc"] == ["query", "check"]
    assert "HTTP 401" in refused.text and CANARY not in refused.text
    down = client.post("/api/models", params={"check": True}, json=_model("m3"), headers=ADMIN)
    assert down.status_code == 422 and "cannot connect" in down.json()["detail"][0]["msg"]
    assert client.get("/api/models/m2").status_code == 404  # a failed check stores nothing
