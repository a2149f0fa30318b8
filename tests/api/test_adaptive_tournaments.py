"""Adaptive tournaments through the API: created with a goal and a budget, read with the
engine's criterion, spending and stop reason, joined by a model later, and refused with a 422
naming the field. Matches are scheduled by the workers' own pass and played by storing what
the workers store (tests/arena/store/test_adaptive.py), on a real PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from api.core.config import ApiSettings
from arena.ratings.adaptive_state import decide
from arena.store.adaptive import schedule_pass
from arena.store.pool import Pool, open_pool
from tests.api.conftest import ADMIN
from tests.arena.store.test_adaptive import CI_S_PER_RUN, TOKENS_PER_ANSWER, _open_matches, _play
from workers.ratings import refresh_boards

TRUTH = {"oracle": 1400.0, "partial": 1000.0, "null": 600.0}


@pytest.fixture
def pool(api_settings: ApiSettings) -> Iterator[Pool]:
    opened = open_pool(api_settings.database_url)
    try:
        yield opened
    finally:
        opened.close()


def _start(client: TestClient, **body: Any) -> tuple[int, dict[str, Any]]:
    answer = client.post("/api/tournaments", headers=ADMIN, json={"tasks": "demo", **body})
    return answer.status_code, answer.json()


def _one_step(pool: Pool, tournament: int, rng: np.random.Generator) -> bool:
    """A worker's pass, then one match in flight played; False once the pass ended it."""
    done = schedule_pass(pool, tournament, lambda book, slots: decide(book, slots, tournament))
    if done.decision is None or done.decision.stop is not None:
        return False
    match_id, a, b = _open_matches(pool, tournament)[0]
    p = 1 / (1 + 10 ** ((TRUTH[b] - TRUTH[a]) / 400))
    _play(pool, match_id, a, b, a if rng.random() < p else b)
    return True


def test_bad_adaptive_input_is_refused_naming_the_field(client: TestClient) -> None:
    models = ["oracle", "null"]
    for body, loc, words in [
        ({"adaptive": {}}, ["body", "adaptive"], 'only for mode "adaptive"'),
        ({"mode": "swiss"}, ["body", "mode"], "round_robin"),
        ({"mode": "adaptive", "adaptive": {"goal": {"separate": False}}},
         ["body", "adaptive", "goal"], "a goal needs"),
        ({"mode": "adaptive", "adaptive": {"goal": {"target_width": -5}}},
         ["body", "adaptive", "goal", "target_width"], "greater than 0"),
        ({"mode": "adaptive", "adaptive": {"budget": {"matches": 0}}},
         ["body", "adaptive", "budget", "matches"], "greater than or equal to 1"),
        ({"mode": "adaptive", "adaptive": {"budget": {"dollars": 3}}},
         ["body", "adaptive", "budget", "dollars"], "Extra inputs"),
        ({"mode": "adaptive", "adaptive": {"in_flight": 0}},
         ["body", "adaptive", "in_flight"], "greater than or equal to 1"),
    ]:  # fmt: skip
        code, answer = _start(client, models=models, **body)
        assert code == 422, (body, answer)
        detail = answer["detail"][0]
        assert detail["loc"] == loc and words in detail["msg"], (body, detail)
    assert client.get("/api/tournaments").json()["total"] == 0


def test_an_adaptive_tournament_shows_its_goal_spending_and_stop(
    client: TestClient, pool: Pool, api_settings: ApiSettings
) -> None:
    budget = {"matches": 9, "ci_hours": 1.0, "tokens": 10**6, "money_usd": 5.0,
              "per_model_ci_hours": 0.5, "per_model_tokens": 4 * 10**5}  # fmt: skip
    code, created = _start(
        client,
        models=["oracle", "partial", "null"],
        mode="adaptive",
        adaptive={"goal": {"target_width": 50}, "budget": budget, "in_flight": 2},
    )
    assert code == 202, created
    assert created["mode"] == "adaptive" and created["status"] == "running"
    assert created["progress"]["total"] == 0  # the workers choose the matches
    shown = created["adaptive"]
    assert shown["goal"] == {"target_width": 50.0, "separate": True}
    unset = {"per_model_matches": None, "per_model_money_usd": None}
    assert shown["budget"] == {**budget, **unset} and shown["in_flight"] == 2
    assert shown["spent"] == {"matches": 0, "ci_seconds": 0, "tokens": 0, "money_usd": 0}
    assert shown["left"] == {"matches": 9, "ci_seconds": 3600, "tokens": 10**6, "money_usd": 5}
    assert shown["widest_open"] > 50 and shown["target_width"] == 50
    assert shown["matches_to_finish"] > 0 and shown["stop_reason"] is None
    robin = client.get("/api/tournaments").json()["tournaments"][0]
    assert robin["id"] == created["id"] and robin["adaptive"]["in_flight"] == 2

    tournament = created["id"]
    with pool.connection() as conn:  # priced, as a registered model would be: $2 / $8
        conn.execute(
            "UPDATE models SET price_input = 2.0, price_output = 8.0 WHERE name = 'partial'"
        )
    rng = np.random.default_rng(0)
    assert _one_step(pool, tournament, rng)
    now = client.get(f"/api/tournaments/{tournament}").json()
    assert now["progress"]["done"] == 1 and now["progress"]["queued"] == 1
    per_match = {"matches": 1, "ci_seconds": 4 * CI_S_PER_RUN, "tokens": 4 * TOKENS_PER_ANSWER}
    (first,) = [m for m in client.get("/api/matches").json()["matches"] if m["status"] == "done"]
    played = {first["a"], first["b"]}
    cost = 2 * (1000 * 2.0 + 500 * 8.0) / 1e6 if "partial" in played else 0.0
    assert now["adaptive"]["spent"] == {**per_match, "money_usd": pytest.approx(cost)}
    assert now["adaptive"]["left"]["matches"] == 9 - 1 - 1  # one done, one in flight
    while _one_step(pool, tournament, rng):
        pass
    ended = client.get(f"/api/tournaments/{tournament}").json()
    assert ended["status"] == "done" and ended["finished_at"] is not None
    assert ended["adaptive"]["stop_reason"] == "budget"
    assert ended["progress"]["done"] == 9 and ended["adaptive"]["left"]["matches"] == 0
    assert ended["adaptive"]["widest_open"] > 50  # 9 matches leave 50-point intervals far off

    spending = {m["model"]: m for m in ended["spending"]}
    assert set(spending) == set(TRUTH) and sum(m["matches"] for m in spending.values()) == 2 * 9
    for m in spending.values():  # each answers twice a match; the match's CI counts for both
        assert m["tokens"] == m["matches"] * 2 * TOKENS_PER_ANSWER
        assert m["ci_seconds"] == m["matches"] * 4 * CI_S_PER_RUN
    assert spending["oracle"]["money_usd"] is None  # no registered price: unknown, not free
    assert spending["partial"]["money_usd"] == pytest.approx(
        spending["partial"]["matches"] * 2 * (1000 * 2.0 + 500 * 8.0) / 1e6
    )
    assert ended["adaptive"]["spent"]["money_usd"] == pytest.approx(
        spending["partial"]["money_usd"]
    )

    refresh_boards(pool, tournament, 50)
    board = client.get("/api/leaderboard", params={"tournament": tournament}).json()
    assert board["goal"] == {"target_width": 50.0, "separate": True}
    assert [r["provisional"] for r in board["rows"]] == [True] * 3  # no interval 50 wide yet
    assert sum(r["matches"] for r in board["rows"]) == 2 * 9
    everyone = client.get("/api/leaderboard").json()
    assert everyone["goal"] is None


def test_a_model_joins_an_adaptive_tournament_to_be_placed(client: TestClient, pool: Pool) -> None:
    code, created = _start(client, models=["oracle", "null"], mode="adaptive",
                           adaptive={"budget": {"matches": 2}})  # fmt: skip
    assert code == 202, created
    tournament = created["id"]
    rng = np.random.default_rng(1)
    while _one_step(pool, tournament, rng):
        pass
    assert client.get(f"/api/tournaments/{tournament}").json()["status"] == "done"

    def join(body: dict[str, Any], tid: int = tournament) -> tuple[int, dict[str, Any]]:
        answer = client.post(f"/api/tournaments/{tid}/models", headers=ADMIN, json=body)
        return answer.status_code, answer.json()

    assert join({"model": "partial"}, 10**6)[0] == 404
    code, refused = join({"model": "ghost"})
    assert code == 422 and refused["detail"][0]["loc"] == ["body", "model"]
    code, refused = join({"model": "oracle"})
    assert code == 409 and "already plays" in refused["detail"][0]["msg"]
    unauthorised = client.post(f"/api/tournaments/{tournament}/models", json={"model": "partial"})
    assert unauthorised.status_code == 401
    code, joined = join({"model": "partial", "budget": {"matches": 8}})
    assert code == 202, joined
    assert joined["status"] == "running" and joined["models"] == ["oracle", "null", "partial"]
    assert (
        joined["adaptive"]["placing"] == ["partial"] and joined["adaptive"]["stop_reason"] is None
    )
    assert joined["adaptive"]["budget"]["matches"] == 8
    while _one_step(pool, tournament, rng):
        pass
    ended = client.get(f"/api/tournaments/{tournament}").json()
    assert ended["status"] == "done" and ended["adaptive"]["placing"] == []
    listed = client.get("/api/matches", params={"tournament": tournament, "limit": 100}).json()
    later = [m for m in listed["matches"] if "partial" in (m["a"], m["b"])]
    assert len(later) == listed["total"] - 2 > 0  # every match after the join placed partial

    code, robin = _start(client, models=["oracle", "null"])
    assert join({"model": "partial"}, robin["id"])[0] == 409
