"""The API under load: 100,000 stored matches among 20 models, read from a second process.

A throwaway PostgreSQL is filled by COPY (20 models, 1,000 tasks, one finished tournament,
its matches with two judged rounds and four answers each) and the rating snapshots are
computed once, as the workers do. `arena serve` runs as its own process; a load process
sends requests on loopback at a fixed rate (open loop: each latency is counted from when its
request was due, so a stalled server cannot hide its queue) and then as fast as 32
connections go, for the leaderboard and for match pages (random ids).

Targets at 200 requests per second: leaderboard p99 < 50 ms, match page p99 < 100 ms.
Beside the latencies: the server's CPU milliseconds per request, and the machine's load
average during the run (latency tails on a shared 2-core machine follow the load).

Run: python bench/api_load.py [--matches N] [--rate R] [--seconds S]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LANGUAGES = ("python", "go", "rust", "cpp")


def _record(rng: random.Random, submitter: str, reviewer: str, winner: str) -> dict[str, Any]:
    """A round's evidence of a typical size: answers, three CI runs with steps and tests."""
    diff = "--- a/src/mod.py\n+++ b/src/mod.py\n@@ -1,3 +1,3 @@\n-    return x\n+    return y\n"
    answer = {
        "raw_text": "Here is the fix.\n```diff\n" + diff + "```\n",
        "diff": diff,
        "parse_error": None,
        "error": None,
        "latency_s": rng.uniform(1, 30),
        "prompt_tokens": 6000,
        "completion_tokens": 400,
    }
    run = {
        "status": "completed",
        "duration_s": 4.2,
        "steps": [
            {"name": n, "exit_code": 0, "duration_s": 1.1, "log": "ok\n" * 40}
            for n in ("install", "build", "test")
        ],
        "tests": {f"tests/test_mod.py::test_{k}": "passed" for k in range(12)},
    }
    facts = {
        f: rng.random() < 0.5
        for f in ("patch_applies", "patch_correct", "tests_valid", "tests_catch")
    }
    return {
        "submitter": submitter,
        "reviewer": reviewer,
        "patch": answer,
        "tests": answer,
        "runs": {"base+tests": run, "patch+gold": run, "patch+tests": run},
        **facts,
        "reasons": {f: f"{f} because the run said so" for f in facts},
        "winner": winner,
    }


def fill(database_url: str, n_matches: int, n_models: int = 20, n_tasks: int = 1000) -> None:
    import psycopg

    rng = random.Random(0)
    models = [f"model-{k:02d}" for k in range(n_models)]
    strength = {m: rng.gauss(0, 1) for m in models}
    pairs = list(itertools.combinations(models, 2))
    combos = rng.sample(range(n_tasks * len(pairs)), n_matches)
    with psycopg.connect(database_url) as conn, conn.cursor() as cur:
        for m in models:
            spec = {"name": m, "kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": m}
            cur.execute(
                "INSERT INTO models (name, spec, organization, price_input, price_output)"
                " VALUES (%s, %s, 'bench', 1.0, 4.0)",
                (m, json.dumps(spec)),
            )
        cur.execute(
            "INSERT INTO tournaments (id, models, tasks_spec, status, finished_at)"
            " VALUES (1, %s, 'bench', 'done', now())",
            (models,),
        )
        with cur.copy("COPY tasks (id, instance_id, fingerprint, language, task) FROM STDIN") as cp:
            for t in range(n_tasks):
                task = {
                    "instance_id": f"bench__task-{t}",
                    "repo": "https://example.invalid/r.git",
                    "base_commit": "0" * 40,
                    "language": LANGUAGES[t % 4],
                    "problem_statement": "The parser drops the last field. " * 30,
                    "test_patch": "diff",
                    "created_at": f"2025-{1 + t % 12:02d}-01",
                }
                cp.write_row(
                    (t + 1, task["instance_id"], f"fp{t}", task["language"], json.dumps(task))
                )
        with (
            cur.copy(
                "COPY matches (id, tournament_id, task_id, a, b, status, score, result,"
                " finished_at) FROM STDIN"
            ) as matches,
        ):
            outcomes = []
            for k, combo in enumerate(combos, start=1):
                task, (a, b) = combo // len(pairs) + 1, pairs[combo % len(pairs)]
                rounds = []
                for sub, rev in ((a, b), (b, a)):
                    p = 1 / (1 + 10 ** ((strength[rev] - strength[sub]) / 2))
                    rounds.append("submitter" if rng.random() < p else "reviewer")
                score = {a: 0, b: 0}
                for (sub, rev), w in zip(((a, b), (b, a)), rounds, strict=True):
                    score[sub if w == "submitter" else rev] += 1
                result = "tie" if score[a] == score[b] else (a if score[a] > score[b] else b)
                outcomes.append((k, a, b, rounds))
                matches.write_row((k, 1, task, a, b, "done", json.dumps(score), result, "now"))
        with cur.copy(
            "COPY rounds (id, match_id, idx, submitter, reviewer, record, winner,"
            " finished_at) FROM STDIN"
        ) as rounds_copy:
            for k, a, b, rounds in outcomes:
                for idx, ((sub, rev), w) in enumerate(zip(((a, b), (b, a)), rounds, strict=True)):
                    record = json.dumps(_record(rng, sub, rev, w))
                    rounds_copy.write_row((2 * k - 1 + idx, k, idx, sub, rev, record, w, "now"))
        with cur.copy(
            "COPY answers (round_id, role, model, answer, latency_s, prompt_tokens,"
            " completion_tokens) FROM STDIN"
        ) as answers:
            for k, a, b, _ in outcomes:
                for idx, (sub, rev) in enumerate(((a, b), (b, a))):
                    for role, model in (("submitter", sub), ("reviewer", rev)):
                        answer = {
                            "raw_text": "```diff\n...\n```",
                            "diff": "...",
                            "latency_s": 12.5,
                            "prompt_tokens": 6000,
                            "completion_tokens": 400,
                        }
                        answers.write_row(
                            (
                                2 * k - 1 + idx,
                                role,
                                model,
                                json.dumps(answer),
                                rng.uniform(2, 40),
                                6000,
                                400,
                            )
                        )
        for table in ("tasks", "matches", "rounds", "answers", "tournaments"):
            cur.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'),"
                f" (SELECT max(id) FROM {table}))"
            )
        conn.commit()
        conn.execute("ANALYZE")


def snapshot(database_url: str) -> float:
    """What the workers' ratings step stores (every board); returns how long it took."""
    from arena.ratings.scopes import snapshots
    from arena.store.pool import open_pool
    from arena.store.snapshots import database_now, store_snapshots
    from arena.store.standings import model_dates, rated_matches

    started = time.monotonic()
    pool = open_pool(database_url, max_size=2)
    found = snapshots(rated_matches(pool, 1), bootstrap=100, models=model_dates(pool))
    store_snapshots(pool, 1, found, database_now(pool))
    store_snapshots(pool, None, found, database_now(pool))
    pool.close()
    return time.monotonic() - started


async def _connection(host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection(host, port)


async def _get(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, path: str) -> int:
    """One keep-alive HTTP/1.1 GET; a raw client costs the load process far less than httpx."""
    writer.write(f"GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n".encode())
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    chunked = False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
        elif name.lower() == b"transfer-encoding" and b"chunked" in value.lower():
            chunked = True
    if chunked:
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip(), 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    else:
        await reader.readexactly(length)
    return status


async def _load(url: str, paths: list[str], rate: float, seconds: float) -> dict[str, float]:
    """Open loop at `rate` over up to 64 connections (latency from when each request was
    due, queueing included); rate 0: 32 connections as fast as they go."""
    host, port = url.removeprefix("http://").split(":")
    latencies: list[float] = []
    errors = 0
    queue: asyncio.Queue[tuple[str, float] | None] = asyncio.Queue()
    started = time.perf_counter()

    async def connection() -> None:
        nonlocal errors
        reader, writer = await _connection(host, int(port))
        counter = itertools.count()
        while True:
            if rate > 0:
                item = await queue.get()
                if item is None:
                    break
                path, due = item
            else:
                if time.perf_counter() - started >= seconds:
                    break
                path, due = paths[next(counter) * 7919 % len(paths)], time.perf_counter()
            try:
                if await _get(reader, writer, path) != 200:
                    errors += 1
            except (OSError, asyncio.IncompleteReadError, ValueError):
                errors += 1
                writer.close()
                reader, writer = await _connection(host, int(port))
            latencies.append(time.perf_counter() - due)
        writer.close()

    workers = [asyncio.create_task(connection()) for _ in range(64 if rate > 0 else 32)]
    if rate > 0:
        for k in range(int(rate * seconds)):
            due = started + k / rate
            delay = due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            queue.put_nowait((paths[k % len(paths)], due))
        for _ in workers:
            queue.put_nowait(None)
    await asyncio.gather(*workers)
    elapsed = time.perf_counter() - started
    ordered = sorted(latencies)
    return {
        "requests": len(ordered),
        "errors": errors,
        "rps": len(ordered) / elapsed,
        "p50_ms": 1000 * ordered[len(ordered) // 2],
        "p99_ms": 1000 * ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))],
    }


def _cpu_s(pid: int) -> float:
    """CPU seconds the server process has used (user + system)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load_process(url: str, paths: list[str], rate: float, seconds: float) -> dict[str, float]:
    """The load runs in a second process, so the server keeps its own cores' worth of GIL."""
    out = subprocess.run(
        [sys.executable, __file__, "--load", url, "--rate", str(rate), "--seconds", str(seconds)],
        input=json.dumps(paths),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--matches", type=int, default=100_000)
    parser.add_argument("--rate", type=float, default=200)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--load", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.load:
        paths = json.loads(sys.stdin.read())
        print(json.dumps(asyncio.run(_load(args.load, paths, args.rate, args.seconds))))
        return

    from arena.store.migrate import migrate
    from tests.servers import free_port, postgres_server
    from tests.workers.conftest import ARENA

    with postgres_server() as pg, tempfile.TemporaryDirectory() as scratch:
        url = pg.new_database()
        migrate(url)
        started = time.monotonic()
        fill(url, args.matches)
        print(
            f"stored {args.matches:,} matches among 20 models in {time.monotonic() - started:.0f} s"
        )
        print(f"rating snapshots computed (as the workers do) in {snapshot(url):.1f} s")
        port = free_port()
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "ARENA_DATABASE_URL": url,
            "ARENA_BROKER_URL": f"redis://127.0.0.1:{free_port()}/0",
            "ARENA_ADMIN_TOKEN": "bench",
            "ARENA_SECRET_KEY": "bench",
        }
        log_file = Path(scratch, "api.log")
        server = subprocess.Popen(
            [ARENA, "serve", "--port", str(port)],
            env=env,
            stdout=log_file.open("wb"),
            stderr=subprocess.STDOUT,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            import httpx

            for _ in range(300):
                try:
                    httpx.get(f"{base}/api/leaderboard?tournament=1", timeout=30)
                    break
                except httpx.TransportError:
                    time.sleep(0.2)
            rng = random.Random(1)
            pages = {
                "leaderboard": ["/api/leaderboard?tournament=1", "/api/leaderboard"],
                "match page": [f"/api/matches/{rng.randint(1, args.matches)}" for _ in range(5000)],
            }
            rows = []
            for name, paths in pages.items():
                load_process(base, paths, args.rate, 3)  # warm up
                before, load_before = _cpu_s(server.pid), os.getloadavg()[0]
                fixed = load_process(base, paths, args.rate, args.seconds)
                fixed["cpu_ms"] = 1000 * (_cpu_s(server.pid) - before) / fixed["requests"]
                fixed["load"] = max(load_before, os.getloadavg()[0])
                most = load_process(base, paths, 0, min(args.seconds, 15))
                rows.append((name, fixed, most))
        finally:
            server.terminate()
            server.wait(20)
    print(
        f"\n{'page':<12} {'rate':>7} {'p50 ms':>8} {'p99 ms':>8} {'errors':>6}"
        f" {'CPU ms/req':>10} {'load avg':>8}   {'max rps (32 conns)':>18} {'p50 ms':>8}"
        f" {'p99 ms':>8}"
    )
    for name, fixed, most in rows:
        print(
            f"{name:<12} {fixed['rps']:>7.0f} {fixed['p50_ms']:>8.1f} {fixed['p99_ms']:>8.1f}"
            f" {fixed['errors']:>6.0f} {fixed['cpu_ms']:>10.2f} {fixed['load']:>8.1f}"
            f"   {most['rps']:>18.0f} {most['p50_ms']:>8.1f}"
            f" {most['p99_ms']:>8.1f}"
        )
    targets = {"leaderboard": 50.0, "match page": 100.0}
    for name, fixed, _ in rows:
        verdict = "met" if fixed["p99_ms"] < targets[name] and not fixed["errors"] else "MISSED"
        print(f"target {name} p99 < {targets[name]:.0f} ms at {args.rate:.0f} rps: {verdict}")


if __name__ == "__main__":
    main()
