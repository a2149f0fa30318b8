"""`arena serve` as a real process with real PostgreSQL, Redis, workers and Docker."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from arena.ratings.results_file import parse_results_lines
from arena.retrieval import estimate_tokens
from arena.tasks.demo import demo_sources
from ci_runner import CISettings
from tests.api.conftest import SECRET, TOKEN, demo_jsonl
from tests.api.test_models import CANARY, database_text
from tests.arena.scripted_server import Reply, scripted_server
from tests.command import ARENA
from tests.servers import free_port
from tests.workers.conftest import Workers

ADMIN = {"Authorization": f"Bearer {TOKEN}"}
TASKS = ["demo__py-ledger-split", "demo__py-textkit-slug"]


@pytest.fixture
def api_env(service_env: dict[str, str]) -> dict[str, str]:
    return {**service_env, "ARENA_ADMIN_TOKEN": TOKEN, "ARENA_SECRET_KEY": SECRET}


@pytest.fixture
def served(api_env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    port = free_port()
    with (tmp_path / "api.log").open("wb") as log:
        proc = subprocess.Popen(
            [ARENA, "serve", "--port", str(port)], env=api_env, stdout=log, stderr=subprocess.STDOUT
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    httpx.get(f"{url}/api/models", timeout=2)
                    break
                except httpx.TransportError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise AssertionError((tmp_path / "api.log").read_text()) from None
                    time.sleep(0.2)
            yield url
        finally:
            proc.terminate()
            proc.wait(20)


def test_the_server_refuses_to_start_without_its_secrets(service_env: dict[str, str]) -> None:
    env = {
        k: v for k, v in service_env.items() if k not in ("ARENA_ADMIN_TOKEN", "ARENA_SECRET_KEY")
    }
    refused = subprocess.run([ARENA, "serve", "--port", str(free_port())], env=env,
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    assert refused.returncode == 2
    assert "ARENA_ADMIN_TOKEN and ARENA_SECRET_KEY must be set" in refused.stderr
    only_token = {**env, "ARENA_ADMIN_TOKEN": TOKEN}
    refused = subprocess.run([ARENA, "serve", "--port", str(free_port())], env=only_token,
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    assert refused.returncode == 2 and "ARENA_SECRET_KEY must be set" in refused.stderr


@pytest.mark.docker
def test_a_tournament_through_the_api_from_registration_to_evidence(
    served: str,
    api_env: dict[str, str],
    workers: Workers,
    ci_settings: CISettings,
    images: dict[str, str],
    tmp_path: Path,
) -> None:
    api = httpx.Client(base_url=served, timeout=120)
    seen: list[str] = []

    def call(method: str, path: str, **kwargs: object) -> httpx.Response:
        answer = api.request(method, path, **kwargs)  # type: ignore[arg-type]
        seen.append(answer.text)
        return answer

    workers.env = api_env
    workers.start("control,llm", 4)
    workers.start("ci", 2)
    with scripted_server([], default=Reply(content="I cannot help with that.")) as endpoint:
        created = call("POST", "/api/models", params={"check": True}, headers=ADMIN, json={
            "name": "m1", "base_url": endpoint.url, "model": "x", "api_key": CANARY,
            "price_input_per_mtok": 2.0, "price_output_per_mtok": 8.0, "organization": "Acme"})  # fmt: skip
        assert created.status_code == 201, created.text
        corpus = demo_jsonl(ci_settings.cache_dir)
        imported = call("POST", "/api/tasks/import", headers=ADMIN,
                        files={"file": ("demo.jsonl", corpus.encode())})  # fmt: skip
        assert imported.status_code == 200, imported.text
        assert (
            len(imported.json()["imported"]) == len(demo_sources())
            and imported.json()["errors"] == []
        )
        started = call("POST", "/api/tournaments", headers=ADMIN, json={
            "models": ["m1", "oracle", "null"], "tasks": TASKS,
            "settings": {"context_budget_tokens": 500}})  # fmt: skip
        assert started.status_code == 202, started.text
        tournament = started.json()["id"]
        events: list[tuple[str, dict[str, object]]] = []
        with api.stream("GET", f"/api/tournaments/{tournament}/events", timeout=900) as stream:
            kind = ""
            for line in stream.iter_lines():
                if line.startswith("event: "):
                    kind = line.removeprefix("event: ")
                elif line.startswith("data: "):
                    events.append((kind, json.loads(line.removeprefix("data: "))))
                    if kind == "end":
                        break
        assert all(f"Bearer {CANARY}" == auth for auth in endpoint.auth) and endpoint.auth
        prompts = [r["messages"][-1]["content"] for r in endpoint.requests[1:]]  # [0]: the check
    contexts = [p.split("## Relevant code", 1)[1].split("\n## ", 1)[0] for p in prompts]
    assert len(contexts) == 8  # m1 answers twice in each of its 4 matches
    # the tournament's budget (plus the heading), not the default 6,000 that takes each whole
    # demo repo (~780 tokens)
    assert all(0 < estimate_tokens(c) <= 530 for c in contexts), [
        estimate_tokens(c) for c in contexts
    ]
    progress = [e["progress"] for k, e in events if k == "progress"]
    done = [p["done"] for p in progress]  # type: ignore[index]
    assert done == sorted(done) and len(progress) >= 2
    end = events[-1][1]
    assert events[-1][0] == "end" and end["status"] == "done"
    assert end["progress"]["done"] == 6 and end["settings"] == {"context_budget_tokens": 500}  # type: ignore[index]

    board = call("GET", "/api/leaderboard", params={"tournament": tournament}).json()
    assert board["match_count"] == 6 and board["computed_at"] is not None
    rows = {r["model"]: r for r in board["rows"]}
    assert set(rows) == {"m1", "oracle", "null"} and rows["oracle"]["wins"] == 4
    assert rows["m1"]["cost"] > 0 and rows["m1"]["latency"] > 0 and rows["oracle"]["cost"] is None
    assert call("GET", "/api/leaderboard", params={"language": "python"}).json()["match_count"] == 6
    by_kind = call("GET", "/api/leaderboard", params={"kind": "gold-judged"}).json()
    assert by_kind["match_count"] == 6 and by_kind["kind"] == "gold-judged"
    window = {"tournament": tournament, "created_after": "2026-01-20"}
    assert call("GET", "/api/leaderboard", params=window).json()["computed_at"] is None
    deadline = time.monotonic() + 60
    while (shown := call("GET", "/api/leaderboard", params=window).json())["computed_at"] is None:
        assert time.monotonic() < deadline, "no worker computed the window"
        time.sleep(0.5)
    later = [t for t in TASKS if t.endswith("ledger-split")]  # opened 2026-02-03, slug 01-12
    assert shown["match_count"] == 3 * len(later) and len(shown["rows"]) == 3
    matrix = call("GET", "/api/leaderboard/matrix", params={"tournament": tournament}).json()
    assert sum(map(sum, matrix["matches"])) == 12
    listed = call("GET", "/api/matches", params={"tournament": tournament, "model": "m1"}).json()
    assert listed["total"] == 4
    with_oracle = [m for m in listed["matches"] if "oracle" in (m["a"], m["b"])]
    evidence = call("GET", f"/api/matches/{with_oracle[0]['id']}").json()
    assert evidence["task_detail"]["problem_statement"] and evidence["result"] == "oracle"
    assert [len(r["answers"]) for r in evidence["rounds"]] == [2, 2]
    assert all(r["judged"] and r["reasons"] and r["facts"] for r in evidence["rounds"])
    oracle_submits = next(r for r in evidence["rounds"] if r["submitter"] == "oracle")
    assert oracle_submits["facts"]["patch_correct"] and oracle_submits["runs"]
    run = next(iter(oracle_submits["runs"].values()))
    assert run["steps"] and "tests" in run
    assert evidence["cost"] > 0 and evidence["prompt_tokens"] > 0
    results = call("GET", "/api/results.jsonl", params={"tournament": tournament})
    parsed = parse_results_lines(results.text.splitlines())
    assert len(parsed.matches) == 6 and not parsed.errors and len(parsed.rounds) == 12
    (tmp_path / "results.jsonl").write_text(results.text)
    recomputed = subprocess.run(
        [ARENA, "ratings", "--results", str(tmp_path / "results.jsonl"), "--json"],
        env=api_env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert recomputed.returncode == 0, recomputed.stderr
    for row in json.loads(recomputed.stdout):  # anyone can recompute the same standings
        shown = rows[row["model"]]
        assert (row["wins"], row["losses"], row["ties"]) == (
            shown["wins"],
            shown["losses"],
            shown["ties"],
        )
    health = call("GET", "/api/health")
    assert health.status_code == 200, health.text
    assert all(q["workers"] for q in health.json()["queues"].values())

    assert not [text for text in seen if CANARY in text]
    logs = "".join(p.read_text(errors="replace") for p in tmp_path.glob("*.log"))
    assert "Started server process" in logs and CANARY not in logs
    assert CANARY not in database_text(api_env["ARENA_DATABASE_URL"])
