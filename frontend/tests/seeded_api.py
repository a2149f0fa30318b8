"""The real Arena API for the browser tests: throwaway PostgreSQL and Redis, seeded, with workers.

Run from the repository root (`python frontend/tests/seeded_api.py PORT`); it prints `ready` when
the API (serving frontend/dist at /) answers on 127.0.0.1:PORT, and stops everything on SIGTERM.
Seeded: a 100-model rating snapshot (rated by the workers' own pure function), a tournament of
the baselines whose first match carries hostile evidence (script tags, onerror images,
javascript: links, ANSI escapes, megabytes of log), refused import lines and an invalid task for
the corpus report, tasks whose pipelines came from CI job legs (chosen, tried, candidate,
rejected) with an environment that deviates from what the job asks, a tournament whose match a
model's endpoint failed (the model at fault named), an adaptive tournament stopped on its budget,
and workers so a tournament started from the website really plays.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import tempfile
import threading
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import uvicorn
from psycopg.types.json import Jsonb
from pydantic import SecretStr

from api.core.config import ApiSettings
from api.main import create_app
from arena.faults import Fault, FaultComponent
from arena.match import RoundRecord
from arena.players.base import Answer, Role
from arena.protocol import Winner
from arena.ratings.adaptive_state import decide
from arena.ratings.records import MatchResult, RoundResult
from arena.ratings.scopes import snapshots
from arena.ratings.stopping import Stop
from arena.store.adaptive import schedule_pass
from arena.store.matches import (
    end_match,
    mark_running,
    store_answer,
    store_round,
    store_validation,
)
from arena.store.models import ensure_baselines, list_models
from arena.store.pool import Pool, open_pool
from arena.store.refusals import keep_import_outcome
from arena.store.snapshots import database_now, store_snapshots
from arena.store.standings import model_dates
from arena.store.tasks import upsert_tasks
from arena.store.tournaments import create_tournament
from arena.tasks.demo import demo_tasks
from arena.tasks.refusals import Refusal
from arena.tasks.schema import Language, LegChoice, Task, Validation
from arena.vocabulary import MatchStatus
from ci_runner import CIResult, CISettings
from ci_runner.workflows import JobRef
from tests.servers import postgres_server, redis_server
from tests.workers.conftest import Workers

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "web-admin-token"
SEED_DIR = ROOT / "frontend" / "test-results" / "seed"
IMPORTED_TASK = "demo__py-textkit-slug"  # small and fast: the tournament test plays it
HOSTILE = (
    '<script>window.__xss = "script"</script> <img src=x onerror="window.__xss=\'img\'">'
    " [click me](javascript:window.__xss='link') \x1b[31mred\x1b[0m \x1b]0;title\x07"
)


SEEDED_VALIDATION = Validation(  # shown on the tasks page (the seeded match needs no CI run)
    valid=True,
    fail_to_pass=("tests/test_ring.cpp::wraps", "tests/test_ring.cpp::overwrites"),
    pass_to_pass=(
        "tests/test_ring.cpp::push",
        "tests/test_ring.cpp::pop",
        "tests/test_ring.cpp::len",
    ),
    flaky=("tests/test_ring.cpp::timing",),
    guarded=False,  # a C++ task: no tripwire that must fail goes in its runs
)
LANGUAGES = ("python", "go", "rust", "cpp")
KINDS = ("gold-judged", "ci-judged")


def many_models(count: int, matches: int, seed: int = 7) -> list[MatchResult]:
    """Finished matches among `count` models with hidden strengths: enough to rate each, over
    tasks of every language and kind opened through 2025, with the protocol's round facts."""
    rng = random.Random(seed)
    names = [f"model-{i:03d}" for i in range(count)]
    skill = {n: rng.gauss(0, 1) for n in names}
    found = []
    for i in range(matches):
        a, b = rng.sample(names, 2)
        task = i % 50
        language, kind = LANGUAGES[task % 4], KINDS[task % 3 == 0]
        rounds: list[RoundResult] = []
        rounds_won: list[tuple[str, str, str]] = []
        for sub, rev in ((a, b), (b, a)):
            correct = rng.random() < 1 / (1 + 10 ** -skill[sub])
            valid = rng.random() < 1 / (1 + 10 ** -skill[rev])
            catch = valid and not correct and rng.random() < 0.7
            won = "reviewer" if catch else "submitter" if correct else "draw"
            rounds_won.append((sub, rev, won))
            rounds.append(RoundResult(f"t{task}", sub, rev, won, True, correct, valid, catch,
                                      language, kind))  # fmt: skip
        wins = {a: 0, b: 0}
        for sub, rev, won in rounds_won:
            if won != "draw":
                wins[sub if won == "submitter" else rev] += 1
        found.append(
            MatchResult(
                task=f"t{task}",
                a=a,
                b=b,
                winner="tie" if wins[a] == wins[b] else "a" if wins[a] > wins[b] else "b",
                language=language,
                kind=kind,
                rounds=tuple(rounds),
                match_id=i + 1,
                opened=f"2025-{1 + task % 12:02d}-15T12:00:00Z",
            )
        )
    return found


def register_many(pool: Pool, names: list[str]) -> None:
    """The rated models in the registry with metadata (some left blank, as in real life),
    retired: they only have history, so the tournament form does not offer them."""
    orgs = ("Acme AI", "Open Weights Co", None)
    with pool.connection() as conn:
        for i, name in enumerate(names):
            spec = {"name": name, "kind": "openai", "base_url": "http://127.0.0.1:9/v1",
                    "model": name}  # fmt: skip
            conn.execute(
                "INSERT INTO models (name, spec, organization, license, knowledge_cutoff,"
                " retired_at) VALUES (%s, %s, %s, %s, %s, now()) ON CONFLICT (name) DO NOTHING",
                (name, Jsonb(spec), orgs[i % 3], ("apache-2.0", "proprietary")[i % 2],
                 None if i % 10 == 9 else f"2025-{1 + i % 6:02d}-01"),
            )  # fmt: skip


def hostile_round(submitter: str, reviewer: str, log_mb: float) -> RoundRecord:
    diff = (
        "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n"
        f" def add(a, b):\n-    return a - b\n+    return a + b  # {HOSTILE}\n"
    )
    answer = Answer(
        raw_text=f"My fix {HOSTILE}\n```diff\n{diff}```",
        diff=diff,
        latency_s=4.2,
        prompt_tokens=5400,
        completion_tokens=800,
    )
    line = f"\x1b[32mPASSED\x1b[0m tests/test_calc.py::test_add {HOSTILE}\n"
    big_log = line * int(log_mb * 1e6 / len(line))
    run = CIResult.model_validate(
        {
            "status": "failed",
            "steps": [
                {"name": "install", "exit_code": 0, "duration_s": 1.5, "log": "ok\n"},
                {"name": f"test {HOSTILE}", "exit_code": 1, "duration_s": 9.5, "log": big_log},
            ],
            "tests": {"tests/test_calc.py::test_add": "passed", f"test_{HOSTILE}": "failed"},
            "duration_s": 11.0,
        }
    )
    return RoundRecord(
        submitter=submitter,
        reviewer=reviewer,
        patch=answer,
        tests=answer,
        runs={"tests_on_base": run, "tests_on_gold": run, "patch_with_gold_tests": run},
        patch_applies=True,
        patch_correct=True,
        tests_valid=False,
        tests_catch=False,
        reasons={
            "patch_correct": f"FAIL_TO_PASS pass {HOSTILE}",
            "tests_valid": "they fail on gold",
        },
        winner=Winner.SUBMITTER,
    )


REFUSED = (  # (instance id, language, field, message, reason): as an import reports them
    ("go__gin-101", "go", "repo", "cannot clone github.com/gone/gin", "repo not reachable"),
    ("cpp__fmt-7", "cpp", "ci_name_list", "the Linux job needs conda", "conda job (unsupported)"),
    ("python__qt-3", "python", "ci_name_list", "only windows-latest", "Windows or macOS only"),
    (None, "rust", "(line)", "not JSON: Expecting value", "not JSON"),
)
INVALID_REASON = "no test fails without the gold patch and passes with it"


def seed_corpus(pool: Pool, cache_dir: Path) -> None:
    """Refused lines of SwingArena-shaped files and an imported task that validation refused,
    for the corpus report (the seeded tournament's task is valid: playable)."""
    for number, (instance_id, language, field, message, reason) in enumerate(REFUSED, 1):
        refusal = Refusal(instance_id=instance_id, language=language,
                          repo=None if instance_id is None else f"https://github.com/x/{number}",
                          source_file=f"{language}_filtered_instance_list.jsonl", line=number,
                          field=field, message=message, reason=reason)  # fmt: skip
        keep_import_outcome(pool, [refusal], [], refusal.source_file)
    invalid = demo_tasks(cache_dir / "demo-repos")[2]
    (stored,) = upsert_tasks(pool, [invalid])
    verdict = Validation(valid=False, reason=INVALID_REASON, fingerprint=invalid.fingerprint())
    store_validation(pool, stored.id, invalid, verdict)


WORKFLOW = ".github/workflows/tests.yml"
DEVIATION = "job asks Python 3.12; ran on 3.13 (3.12 is not packaged for the task's date)"
TRIED = "no test fails without the gold patch and passes with it"


def _leg(
    leg: str, status: str, why: str, rank: int | None, category: str | None = None
) -> LegChoice:
    return LegChoice(leg=leg, workflow=WORKFLOW, job_id="tests", status=status, why=why,
                     category=category, rank=rank)  # fmt: skip


def legs_tasks() -> list[tuple[Task, Validation]]:
    """Tasks whose pipelines came from CI job legs, as an import and validation leave them: one
    valid on its second-ranked leg in an environment that deviates from the job's ask, one
    invalid on every leg it tried and built exactly as asked."""
    deviating = Task(
        instance_id="python__legs-deviation",
        repo="octo/legs",
        base_commit="abcdef0" + "0" * 33,
        language=Language("python"),
        ci_name_list=(JobRef("tests"),),
        patch="diff --git a/legs.py b/legs.py\n",
        ci_job=f"tests (3.12, ubuntu-latest) @ {WORKFLOW}",
        toolchain_request="3.12",
        skipped_actions=("actions/cache@v4", "codecov/codecov-action@v4"),
        workflow_notes=("tests (3.12, ubuntu-latest): Linux, runs pytest",
                        "step 'Upload coverage': skipped (codecov/codecov-action@v4)"),
        environment_notes=(DEVIATION,),
        ci_legs=(
            _leg("tests (3.13, ubuntu-latest)", "tried", f"tried: {TRIED}", 1),
            _leg("tests (3.12, ubuntu-latest)", "chosen", "Linux, runs pytest", 2),
            _leg("tests (3.11, ubuntu-latest)", "candidate", "Linux, runs pytest", 3),
            _leg("tests (3.12, windows-latest)", "rejected", "runs on windows-latest",
                 None, "Windows or macOS only"),
            _leg("docs", "rejected", "runs no tests (sphinx-build)", None, "no test step"),
        ),
    )  # fmt: skip
    exact = deviating.model_copy(
        update={
            "instance_id": "rust__legs-tried",
            "language": Language("rust"),
            "filed_language": "python",  # its gold patch and tests are Rust
            "ci_job": f"test (stable) @ {WORKFLOW}",
            "toolchain_request": "stable",
            "skipped_actions": (),
            "environment_notes": (),
            "ci_legs": (
                _leg("test (stable)", "chosen", f"tried: {TRIED}", 1),
                _leg("test (beta)", "tried", f"tried: {TRIED}", 2),
            ),
        }
    )
    reason = f"{TRIED} (on the best-ranked leg {exact.ci_job}; 2 legs tried, none valid)"
    return [
        (deviating, Validation(valid=True, fail_to_pass=("tests/test_legs.py::test_split",),
                               fingerprint=deviating.fingerprint())),
        (exact, Validation(valid=False, reason=reason, fingerprint=exact.fingerprint())),
    ]  # fmt: skip


def seed_legs(pool: Pool) -> None:
    for task, verdict in legs_tasks():
        (stored,) = upsert_tasks(pool, [task])
        store_validation(pool, stored.id, task, verdict)


FAULTY = "flaky-endpoint"  # a registered model whose endpoint refuses its configuration
FAULT_TASK = "demo__rs-duration-units"  # played by no other seeded match
FAULT_REASON = (
    "step answer:2:0:0 failed after 3 attempts; last error: EndpointFault: model flaky-endpoint's"
    " endpoint is at fault: http://127.0.0.1:9/v1/chat/completions refused the request:"
    ' HTTP 401: {"error": {"message": "Incorrect API key provided"}}'
)


def seed_fault(pool: Pool, cache_dir: Path, specs: dict[str, Any]) -> None:
    """A tournament whose one match failed because a model's endpoint refused its configuration,
    as the workers leave it: the model at fault named, the tournament over."""
    (task,) = [t for t in demo_tasks(cache_dir / "demo-repos") if t.instance_id == FAULT_TASK]
    spec = {"name": FAULTY, "kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "x"}
    tid = create_tournament(pool, {FAULTY: spec, "oracle": specs["oracle"]}, [task], "seeded")
    with pool.connection() as conn:
        row = conn.execute(
            "SELECT id, task_id FROM matches WHERE tournament_id = %s", (tid,)
        ).fetchone()
        assert row is not None
        conn.execute(
            "UPDATE tournaments SET status = 'done', finished_at = now() WHERE id = %s", (tid,)
        )
    store_validation(pool, int(row["task_id"]), task,
                     Validation(valid=True, fail_to_pass=("tests::units",),
                                fingerprint=task.fingerprint()))  # fmt: skip
    mark_running(pool, int(row["id"]))
    fault = Fault(FaultComponent.MODEL_ENDPOINT, FAULTY)
    assert end_match(pool, int(row["id"]), MatchStatus.FAILED, reason=FAULT_REASON, fault=fault)


def seed_adaptive(pool: Pool, cache_dir: Path, specs: dict[str, Any]) -> None:
    """An adaptive tournament as the workers leave it once its budget of one match is spent:
    its match chosen and its end recorded by the workers' own scheduling pass."""
    (task,) = [t for t in demo_tasks(cache_dir / "demo-repos") if t.instance_id == FAULT_TASK]
    config = {"goal": {"target_width": 100.0, "separate": True}, "budget": {"matches": 1},
              "in_flight": 2}  # fmt: skip
    players = {m: specs[m] for m in ("oracle", "partial", "null")}
    tid = create_tournament(pool, players, [task], "seeded", {}, config)
    chosen = schedule_pass(pool, tid, lambda book, slots: decide(book, slots, tid))
    (match_id,) = chosen.match_ids
    with pool.connection() as conn:
        row = conn.execute("SELECT a, b FROM matches WHERE id = %s", (match_id,)).fetchone()
    assert row is not None
    mark_running(pool, match_id)
    for idx, (sub, rev) in enumerate(((row["a"], row["b"]), (row["b"], row["a"]))):
        record = hostile_round(sub, rev, 0.001)
        store_answer(pool, match_id, idx, Role.SUBMITTER, sub, record.patch)
        store_answer(pool, match_id, idx, Role.REVIEWER, rev, record.tests)
        store_round(pool, match_id, idx, record)
    end_match(pool, match_id, MatchStatus.DONE, score={row["a"]: 1, row["b"]: 1}, result="tie")
    ended = schedule_pass(pool, tid, lambda book, slots: decide(book, slots, tid))
    assert ended.decision is not None and ended.decision.stop is Stop.BUDGET


def seed(database_url: str, cache_dir: Path) -> None:
    """Stores the seeded data, and writes a one-task file for the import form to upload."""
    SEED_DIR.mkdir(parents=True, exist_ok=True)
    for task in demo_tasks(cache_dir / "demo-repos"):
        if task.instance_id == IMPORTED_TASK:
            (SEED_DIR / "import.jsonl").write_text(task.model_dump_json() + "\n")
    pool = open_pool(database_url)
    try:
        ensure_baselines(pool)
        many = many_models(100, 3000)
        register_many(pool, sorted({m.a for m in many} | {m.b for m in many}))
        specs = {r.name: r.spec for r in list_models(pool, False)}
        task = demo_tasks(cache_dir / "demo-repos")[0]
        task = task.model_copy(update={"problem_statement": f"# Bug\n\nadd() subtracts. {HOSTILE}"})
        tid = create_tournament(
            pool, {m: specs[m] for m in ("oracle", "partial")}, [task], "seeded"
        )
        with pool.connection() as conn:
            row = conn.execute(
                "SELECT id, task_id FROM matches WHERE tournament_id = %s", (tid,)
            ).fetchone()
        assert row is not None
        store_validation(pool, int(row["task_id"]), task, SEEDED_VALIDATION)
        with pool.connection() as conn:
            conn.execute(
                "UPDATE tournaments SET status = 'done', finished_at = now() WHERE id = %s", (tid,)
            )
        assert row is not None
        match_id = int(row["id"])
        mark_running(pool, match_id)
        for idx, (sub, rev) in enumerate((("oracle", "partial"), ("partial", "oracle"))):
            record = hostile_round(sub, rev, 3.0 if idx == 0 else 0.01)
            store_answer(pool, match_id, idx, Role.SUBMITTER, sub, record.patch)
            store_answer(pool, match_id, idx, Role.REVIEWER, rev, record.tests)
            store_round(pool, match_id, idx, record)
        end_match(pool, match_id, MatchStatus.DONE, score={"oracle": 1, "partial": 1}, result="tie")
        seed_corpus(pool, cache_dir)
        seed_legs(pool)
        seed_fault(pool, cache_dir, specs)
        seed_adaptive(pool, cache_dir, specs)
        # stored last, once every model is registered: the cutoff window's board is named by
        # the models' cutoffs, so a model added after it (the faulty one) would make the API
        # ask a worker for a fresh one, computed from the few stored matches, mid-test
        store_snapshots(pool, None, snapshots(many, 20, model_dates(pool)), database_now(pool))
    finally:
        pool.close()


def main(port: int) -> None:
    with ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="arena-web-")))
        postgres = stack.enter_context(postgres_server())
        broker = stack.enter_context(redis_server())
        database_url = postgres.new_database()
        cache_dir = Path(os.environ.get("ARENA_CACHE_DIR", scratch / "cache"))
        seed(database_url, cache_dir)
        env = {
            **os.environ,
            "PYTHONPATH": os.environ.get("PYTHONPATH", str(ROOT)),
            "ARENA_DATABASE_URL": database_url,
            "ARENA_BROKER_URL": broker.url,
            "ARENA_CACHE_DIR": str(cache_dir),
            "ARENA_RATINGS_DEBOUNCE_S": "1",
            "ARENA_RATINGS_BOOTSTRAP": "20",
        }
        workers = Workers(env, scratch)
        stack.callback(workers.stop_all)
        workers.start(concurrency=2)
        settings = ApiSettings(
            database_url=database_url,
            broker_url=broker.url,
            admin_token=SecretStr(TOKEN),
            secret_key=SecretStr("web-secret-key"),
            web_dir=ROOT / "frontend" / "dist",
            # the match pages' tests read finished matches' evidence as any reader would on a
            # corpus no tournament plays again (who reads it by default: tests/api/test_gold.py)
            match_gold_public=True,
        )
        server = uvicorn.Server(
            uvicorn.Config(
                create_app(settings, CISettings(cache_dir=cache_dir)),
                host="127.0.0.1",
                port=port,
                log_level="warning",
            )
        )
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        signal.signal(signal.SIGINT, lambda *_: stop.set())
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started and thread.is_alive():
            stop.wait(0.05)
        print("ready", flush=True)
        stop.wait()
        server.should_exit = True
        thread.join(10)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 8765)
