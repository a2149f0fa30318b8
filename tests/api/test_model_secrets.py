"""Issue 20's attacks on model registration, run for real: a server variable named as a model's
key, a PATCH that moves a stored key to another host, and an endpoint that echoes the key it was
sent. Real API app and PostgreSQL; `arena worker` processes, Redis and an OpenAI-compatible
server on 127.0.0.1 for the matches."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import psycopg
import pytest
from fastapi.testclient import TestClient

from api.core.config import ApiSettings
from ci_runner import CISettings
from tests.api.conftest import ADMIN, SECRET, TOKEN
from tests.api.test_match_faults import TASK, _validated
from tests.api.test_models import CANARY, database_text
from tests.arena.scripted_server import ECHO_AUTH, Reply, scripted_server
from tests.workers.conftest import Workers

ENV_CANARY = "sk-ENV-CANARY-5e2c-from-the-workers-environment"
ECHO_REFUSAL = Reply(status=401, body=json.dumps({"error": f"Incorrect API key: {ECHO_AUTH}"}))


def _model(name: str, base_url: str, **extra: object) -> dict[str, object]:
    return {"name": name, "base_url": base_url, "model": "x", **extra}


@pytest.mark.parametrize(
    "variable", ["ARENA_SECRET_KEY", "ARENA_ADMIN_TOKEN", "ARENA_DATABASE_URL", "HOME"]
)
def test_a_server_variable_named_as_a_models_key_is_refused_and_nothing_is_sent(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    monkeypatch.setenv("ARENA_SECRET_KEY", SECRET)  # as a deployed server holds them
    monkeypatch.setenv("ARENA_ADMIN_TOKEN", TOKEN)
    seen: list[str] = []
    with scripted_server([], default=Reply(content="OK")) as endpoint:
        for check in (True, False):
            created = client.post("/api/models", params={"check": check}, headers=ADMIN,
                                  json=_model("m1", endpoint.url, api_key_env=variable))  # fmt: skip
            seen.append(created.text)
            assert created.status_code == 422, created.text
            (problem,) = created.json()["detail"]
            assert problem["loc"] == ["body", "api_key_env"]
            assert problem["msg"].startswith(f"{variable} may not be read: api_key_env must name")
            assert "ARENA_MODEL_KEY_" in problem["msg"] and "not set" not in problem["msg"]
        assert client.post("/api/models", json=_model("m1", endpoint.url), headers=ADMIN).is_success
        patched = client.patch("/api/models/m1", params={"check": True}, headers=ADMIN,
                               json={"api_key_env": variable})  # fmt: skip
        seen.append(patched.text)
        assert patched.status_code == 422
        assert patched.json()["detail"][0]["loc"] == ["body", "api_key_env"]
    assert endpoint.requests == []  # no check went out, with or without a key
    assert client.get("/api/models/m1").json()["api_key_env"] is None
    assert not [text for text in seen if SECRET in text or TOKEN in text]


def test_a_model_keys_variable_is_read_for_the_check(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_MODEL_KEY_M1", CANARY)
    with scripted_server([Reply(content="OK")]) as endpoint:
        created = client.post("/api/models", params={"check": True}, headers=ADMIN,
                              json=_model("m1", endpoint.url, api_key_env="ARENA_MODEL_KEY_M1"))  # fmt: skip
    assert created.status_code == 201, created.text
    assert endpoint.auth == [f"Bearer {CANARY}"] and CANARY not in created.text
    unset = client.post("/api/models", params={"check": True}, headers=ADMIN,
                        json=_model("m2", endpoint.url, api_key_env="ARENA_MODEL_KEY_M2"))  # fmt: skip
    assert unset.status_code == 422 and "is not set for the server" in unset.text


def test_a_patch_moving_base_url_to_another_host_needs_the_key_again(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_MODEL_KEY_M2", "sk-env-key-of-m2")
    with (
        scripted_server([], default=Reply(content="OK")) as home,
        scripted_server([], default=Reply(content="OK")) as elsewhere,
    ):
        for name, key in (
            ("m1", {"api_key": CANARY}),
            ("m2", {"api_key_env": "ARENA_MODEL_KEY_M2"}),
        ):
            assert client.post(
                "/api/models", json=_model(name, home.url, **key), headers=ADMIN
            ).is_success
            for check in (False, True):
                moved = client.patch(f"/api/models/{name}", params={"check": check}, headers=ADMIN,
                                     json={"base_url": elsewhere.url})  # fmt: skip
                assert moved.status_code == 422, moved.text
                (problem,) = moved.json()["detail"]
                assert problem["loc"] == ["body", "base_url"]
                assert "give api_key or api_key_env again in the same request" in problem["msg"]
            # removing one key source still keeps the other only if it was there: m1's stored
            # key stays when api_key_env is dropped, m2's variable when api_key is dropped
            drop = {"api_key_env": None} if name == "m1" else {"api_key": None}
            moved = client.patch(f"/api/models/{name}", headers=ADMIN,
                                 json={"base_url": elsewhere.url, **drop})  # fmt: skip
            assert moved.status_code == 422 and moved.json()["detail"][0]["loc"] == [
                "body",
                "base_url",
            ]
            assert client.get(f"/api/models/{name}").json()["base_url"] == home.url
        assert elsewhere.requests == []  # no key went to the other host
        # the same host (another path) keeps its key; another host with the key given again
        same_host = home.url.replace("/v1", "/v2")
        kept = client.patch("/api/models/m1", json={"base_url": same_host}, headers=ADMIN)
        assert kept.status_code == 200 and kept.json()["has_api_key"] is True
        moved = client.patch("/api/models/m1", params={"check": True}, headers=ADMIN,
                             json={"base_url": elsewhere.url, "api_key": "sk-for-elsewhere"})  # fmt: skip
        assert moved.status_code == 200, moved.text
        again = client.patch("/api/models/m2", params={"check": True}, headers=ADMIN,
                             json={"base_url": elsewhere.url, "api_key_env": "ARENA_MODEL_KEY_M2"})  # fmt: skip
        assert again.status_code == 200, again.text
        assert elsewhere.auth == ["Bearer sk-for-elsewhere", "Bearer sk-env-key-of-m2"]
        assert CANARY not in json.dumps(elsewhere.requests)
        # a model without a key may move anywhere: there is nothing to carry
        assert client.post("/api/models", json=_model("m3", home.url), headers=ADMIN).is_success
        free = client.patch("/api/models/m3", json={"base_url": elsewhere.url}, headers=ADMIN)
        assert free.status_code == 200, free.text


def _wait(condition, what: str, timeout: float = 120) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


def _start(client: TestClient, models: list[str]) -> int:
    started = client.post("/api/tournaments", headers=ADMIN,
                          json={"models": models, "tasks": [TASK]})  # fmt: skip
    assert started.status_code == 202, started.text
    return int(started.json()["id"])


def _import_validated(client: TestClient, api_settings: ApiSettings, ci: CISettings) -> None:
    from tests.api.conftest import demo_jsonl

    corpus = demo_jsonl(ci.cache_dir, [TASK])
    imported = client.post("/api/tasks/import", headers=ADMIN,
                           files={"file": ("t.jsonl", corpus.encode())})  # fmt: skip
    assert imported.status_code == 200, imported.text
    _validated(api_settings, TASK)


def test_an_endpoint_echoing_its_key_leaks_it_nowhere(
    client: TestClient,
    api_settings: ApiSettings,
    service_env: dict[str, str],
    workers: Workers,
    ci_settings: CISettings,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """m1's endpoint refuses with the key it was sent in its error body (the stored key); m2's
    answers with it (a key from the workers' environment). Neither key shows in a response,
    a column or a log; the refusal is still reported, scrubbed."""
    workers.env = {**service_env, "ARENA_SECRET_KEY": SECRET, "ARENA_ADMIN_TOKEN": TOKEN,
                   "ARENA_STEP_ATTEMPTS": "2", "ARENA_MODEL_KEY_M2": ENV_CANARY}  # fmt: skip
    workers.start("control,llm", 2)  # no CI worker: m2's rounds wait after its answers
    answer = Reply(content=f"I was called with {ECHO_AUTH}; no patch from me.")
    seen: list[str] = []
    with (
        caplog.at_level(logging.INFO),
        scripted_server([], default=ECHO_REFUSAL) as refusing,
        scripted_server([], default=answer) as answering,
    ):
        assert client.post("/api/models", headers=ADMIN,
                           json=_model("m1", refusing.url, api_key=CANARY)).is_success  # fmt: skip
        assert client.post("/api/models", headers=ADMIN, json=_model(
            "m2", answering.url, api_key_env="ARENA_MODEL_KEY_M2")).is_success  # fmt: skip
        _import_validated(client, api_settings, ci_settings)
        first = _start(client, ["m1", "oracle"])
        second = _start(client, ["m2", "oracle"])
        _wait(lambda: client.get(f"/api/tournaments/{first}").json()["status"] == "done",
              "m1's match to fail")  # fmt: skip

        def m2_answered() -> bool:
            with psycopg.connect(api_settings.database_url) as conn:
                row = conn.execute("SELECT count(*) FROM answers WHERE model = 'm2'").fetchone()
            return row is not None and row[0] >= 1

        _wait(m2_answered, "m2's answer to be stored")
        assert (
            refusing.auth[0] == f"Bearer {CANARY}" and answering.auth[0] == f"Bearer {ENV_CANARY}"
        )
        for path in ("/api/matches", f"/api/tournaments/{first}", "/api/tournaments",
                     "/api/models", "/api/leaderboard"):  # fmt: skip
            seen.append(client.get(path).text)
        listed = client.get("/api/matches", params={"tournament": first}).json()["matches"]
        match = client.get(f"/api/matches/{listed[0]['id']}")
        seen += [match.text, client.get("/api/results.jsonl", params={"tournament": first}).text]
        assert client.post(f"/api/tournaments/{second}/cancel", headers=ADMIN).is_success
        seen.append(client.get("/api/matches", params={"tournament": second}).text)

    reason = match.json()["reason"]
    assert match.json()["at_fault"] == "m1" and "HTTP 401" in reason
    assert "Incorrect API key: Bearer [redacted]" in reason  # told, with the key cut out
    with psycopg.connect(api_settings.database_url) as conn:
        row = conn.execute("SELECT answer ->> 'raw_text' FROM answers WHERE model = 'm2'")
        (raw,) = row.fetchone()  # type: ignore[misc]
    assert raw == "I was called with Bearer [redacted]; no patch from me."
    logs = "".join(p.read_text(errors="replace") for p in tmp_path.glob("worker-*.log"))
    assert "HTTP 401" in logs  # the workers did log the failure
    stored = database_text(api_settings.database_url)
    for secret in (CANARY, ENV_CANARY, SECRET, TOKEN):
        assert not [text for text in seen if secret in text], secret
        assert secret not in stored and secret not in logs and secret not in caplog.text, secret


def test_a_model_stored_with_a_service_secret_as_its_key_fails_without_sending_it(
    client: TestClient,
    api_settings: ApiSettings,
    service_env: dict[str, str],
    workers: Workers,
    ci_settings: CISettings,
    tmp_path: Path,
) -> None:
    """A model registered before the rule (its api_key_env put in the store directly): the
    workers refuse to read the variable, and the match fails naming the rule."""
    workers.env = {**service_env, "ARENA_SECRET_KEY": SECRET, "ARENA_STEP_ATTEMPTS": "2"}
    workers.start("control,llm", 2)
    with scripted_server([], default=Reply(content="OK")) as endpoint:
        assert client.post("/api/models", headers=ADMIN, json=_model(
            "m3", endpoint.url, api_key_env="ARENA_MODEL_KEY_M3")).is_success  # fmt: skip
        with psycopg.connect(api_settings.database_url) as conn:
            conn.execute("UPDATE models SET spec = jsonb_set(spec, '{api_key_env}',"
                         " '\"ARENA_SECRET_KEY\"') WHERE name = 'm3'")  # fmt: skip
        _import_validated(client, api_settings, ci_settings)
        tournament = _start(client, ["m3", "oracle"])
        _wait(lambda: client.get(f"/api/tournaments/{tournament}").json()["status"] == "done",
              "m3's match to fail")  # fmt: skip
    assert endpoint.requests == []
    (match,) = client.get("/api/matches", params={"tournament": tournament}).json()["matches"]
    assert match["status"] == "failed" and match["fault"] == "infrastructure"
    shown = client.get(f"/api/matches/{match['id']}").json()["reason"]
    assert "model m3: ARENA_SECRET_KEY may not be read: api_key_env must name" in shown
    logs = "".join(p.read_text(errors="replace") for p in tmp_path.glob("worker-*.log"))
    assert SECRET not in logs and SECRET not in database_text(api_settings.database_url)
