"""GET /api/tasks and /api/tasks/{id}: each task's legs considered (ranked, with their fate),
the chosen leg, skipped actions, the toolchain asked for, how the environment deviates from it,
and why an invalid task is invalid, as stored in PostgreSQL."""

from __future__ import annotations

from fastapi.testclient import TestClient

from api.core.config import ApiSettings
from arena.store.matches import store_validation
from arena.store.pool import open_pool
from arena.store.tasks import upsert_tasks
from arena.tasks.schema import Language, LegChoice, Task, Validation
from ci_runner.workflows import JobRef

WORKFLOW = ".github/workflows/ci.yml"
DEVIATION = "job asks Python 3.12; ran on 3.13 (3.12 not packaged for the task's date)"
REASON = "no test fails without the gold patch and passes with it"


def _leg(
    leg: str, status: str, why: str, rank: int | None, category: str | None = None
) -> LegChoice:
    return LegChoice(leg=leg, workflow=WORKFLOW, job_id="test", status=status, why=why,
                     category=category, rank=rank)  # fmt: skip


def _task() -> Task:
    return Task(
        instance_id="python__legs-1",
        repo="octo/legs",
        base_commit="abcdef0" + "0" * 33,
        language=Language("python"),
        ci_name_list=(JobRef("test"),),
        patch="diff --git a/x b/x\n",
        ci_job=f"test (3.12, ubuntu-latest) @ {WORKFLOW}",
        toolchain_request="3.12",
        skipped_actions=("actions/cache@v4", "codecov/codecov-action@v4"),
        workflow_notes=("test (3.12, ubuntu-latest): chosen: Linux, runs pytest",),
        environment_notes=(DEVIATION,),
        ci_legs=(  # stored out of rank order: a leg rejected late keeps its place
            _leg("test (3.11, ubuntu-latest)", "tried", f"tried: {REASON}", 2),
            _leg("test (3.12, windows-latest)", "rejected", "runs on Windows", None, "Windows"),
            _leg("test (3.12, ubuntu-latest)", "chosen", "Linux, runs pytest", 1),
            _leg("test (3.10, ubuntu-latest)", "candidate", "Linux, runs pytest", 3),
        ),
    )


def test_a_task_shows_its_legs_chosen_leg_and_environment_deviation_with_why_it_is_invalid(
    client: TestClient, api_settings: ApiSettings
) -> None:
    task = _task()
    pool = open_pool(api_settings.database_url)
    try:
        (stored,) = upsert_tasks(pool, [task])
        verdict = Validation(valid=False, reason=REASON, fingerprint=task.fingerprint())
        store_validation(pool, stored.id, task, verdict)
    finally:
        pool.close()

    listed = client.get("/api/tasks").json()
    (summary,) = listed["tasks"]
    assert summary["validity"] == "invalid" and summary["validation_reason"] == REASON
    assert summary["ci_job"] == task.ci_job
    assert summary["legs_considered"] == 4
    assert summary["environment_notes"] == [DEVIATION]

    detail = client.get("/api/tasks/python__legs-1").json()
    assert detail["environment_notes"] == [DEVIATION]
    assert detail["toolchain_request"] == "3.12"
    assert detail["skipped_actions"] == ["actions/cache@v4", "codecov/codecov-action@v4"]
    assert detail["workflow_notes"] == list(task.workflow_notes)
    legs = [(leg["leg"], leg["status"], leg["rank"]) for leg in detail["ci_legs"]]
    assert legs == [  # ranked, the rejected leg last
        ("test (3.12, ubuntu-latest)", "chosen", 1),
        ("test (3.11, ubuntu-latest)", "tried", 2),
        ("test (3.10, ubuntu-latest)", "candidate", 3),
        ("test (3.12, windows-latest)", "rejected", None),
    ]
    rejected = detail["ci_legs"][-1]
    assert rejected == {"leg": "test (3.12, windows-latest)", "workflow": WORKFLOW,
                        "job_id": "test", "status": "rejected", "why": "runs on Windows",
                        "category": "Windows", "rank": None}  # fmt: skip
    assert detail["ci_legs"][1]["why"] == f"tried: {REASON}"


def test_a_task_with_its_own_steps_has_no_legs_and_no_deviation(
    client: TestClient, api_settings: ApiSettings
) -> None:
    plain = _task().model_copy(
        update={"instance_id": "python__steps-1", "ci_legs": (), "ci_job": None,
                "environment_notes": (), "skipped_actions": (), "toolchain_request": None}
    )  # fmt: skip
    pool = open_pool(api_settings.database_url)
    try:
        upsert_tasks(pool, [plain])
    finally:
        pool.close()
    (summary,) = client.get("/api/tasks").json()["tasks"]
    assert (summary["validity"], summary["validation_reason"]) == ("unvalidated", None)
    assert (summary["ci_job"], summary["legs_considered"], summary["environment_notes"]) == (
        None, 0, []
    )  # fmt: skip
    detail = client.get("/api/tasks/python__steps-1").json()
    assert (detail["ci_legs"], detail["skipped_actions"], detail["toolchain_request"]) == (
        [], [], None
    )  # fmt: skip
