"""/api/tasks: import a file of tasks, list and read them, ask for a validation, report on the
corpus (each instance's stage, refused import lines included)."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, File, Path, Query, Response, UploadFile, status
from fastapi.concurrency import run_in_threadpool
from psycopg.rows import DictRow

from api.deps import Admin, IsAdmin, PoolDep, ServicesDep
from api.errors import ApiError, not_found
from api.schemas.common import error_responses
from api.schemas.tasks import (
    CorpusReportOut,
    ImportedTask,
    ImportReport,
    Kind,
    LegOut,
    LineProblem,
    ReportFormat,
    Stage,
    TaskDetail,
    TaskPage,
    TaskSummary,
    ValidationQueued,
    Validity,
)
from api.schemas.tournaments import TaskSelection
from arena.queues import enqueue
from arena.store import refusals as refusals_store
from arena.store import tasks as store
from arena.tasks.importer import import_checked, task_lines
from arena.tasks.json_records import JsonRecordError, load_json
from arena.tasks.refusals import refusals_from
from arena.tasks.report import LibraryTask, corpus_report, csv_text
from arena.tasks.schema import Language
from arena.vocabulary import Queue, TaskName

router = APIRouter(prefix="/tasks", tags=["tasks"])
MAX_UPLOAD = 64 * 1024 * 1024
InstancePath = Annotated[str, Path(min_length=1, max_length=500, description="instance id")]


def _validity(row: DictRow) -> Validity:
    validation = row["validation"]
    if validation is None:
        return "unvalidated"
    return "valid" if validation.get("valid") else "invalid"


def _count(validation: dict[str, Any] | None, field: str) -> int | None:
    return None if validation is None else len(validation.get(field) or ())


def task_summary(row: DictRow) -> TaskSummary:
    validation = row["validation"]
    task = row["task"]
    return TaskSummary(
        instance_id=row["instance_id"],
        language=row["language"],
        filed_language=task.get("filed_language"),
        kind=row["kind"],
        repo=task["repo"],
        base_commit=task["base_commit"],
        issue_created_at=row["issue_created_at"],
        validity=_validity(row),
        validation_reason=(validation or {}).get("reason"),
        fail_to_pass=_count(validation, "fail_to_pass"),
        pass_to_pass=_count(validation, "pass_to_pass"),
        flaky=_count(validation, "flaky"),
        broken=_count(validation, "broken"),
        imported_at=row["imported_at"],
        ci_job=task.get("ci_job"),
        legs_considered=len(task.get("ci_legs") or ()),
        environment_notes=list(task.get("environment_notes") or ()),
    )


def _lines(text: str, language: Language | None) -> list[str]:
    """JSONL, or a SwingArena JSON array (`task_lines`: a record nested too deep is a line the
    import refuses, never a crash); `language` fills records that lack one."""
    lines = task_lines(text)
    if language is None:
        return lines
    filled = []
    for line in lines:
        try:
            record: Any = load_json(line)
        except JsonRecordError:
            filled.append(line)  # reported with its number by the importer
            continue
        if isinstance(record, dict) and not record.get("language"):
            record["language"] = language.value
            line = json.dumps(record)
        filled.append(line)
    return filled


@router.post(
    "/import",
    operation_id="import_tasks",
    dependencies=[Admin],
    responses=error_responses(401, 422),
)
async def import_tasks(
    s: ServicesDep,
    file: Annotated[UploadFile, File(description="JSONL (one task a line) or a JSON array")],
    language: Annotated[Language | None, Query(description="for records without one")] = None,
    check: Annotated[bool, Query(description="check each repo, commit and pipeline")] = True,
) -> ImportReport:
    """Good lines import even when others are bad; each bad one is reported with its number."""
    raw = await file.read(MAX_UPLOAD + 1)
    if len(raw) > MAX_UPLOAD:
        raise ApiError(422, ["body", "file"], "larger than 64 MiB")
    try:
        text = raw.decode()
    except UnicodeDecodeError as exc:
        raise ApiError(422, ["body", "file"], f"not UTF-8 text: {exc.reason}") from None
    lines = _lines(text, language)
    checked_in = s.ci_settings if check else None
    report = await run_in_threadpool(import_checked, lines, checked_in)
    stored = await run_in_threadpool(store.upsert_tasks, s.pool, report.tasks)
    refused = refusals_from(lines, report.errors, file.filename, language)
    imported_ids = [t.instance_id for t in report.tasks]
    await run_in_threadpool(
        refusals_store.keep_import_outcome, s.pool, refused, imported_ids, file.filename
    )
    errors = [LineProblem(line=e.line, field=e.field, problem=e.message) for e in report.errors]
    if errors and not stored:
        raise ApiError(
            422,
            ["body", "file", f"line {errors[0].line}", errors[0].field],
            f"no task imported; line {errors[0].line}: {errors[0].field}: {errors[0].problem}"
            + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""),
        )
    return ImportReport(
        imported=[ImportedTask(instance_id=t.instance_id, new=t.new) for t in stored],
        errors=errors,
    )


@router.get("", operation_id="list_tasks", responses=error_responses(422))
def list_tasks(
    pool: PoolDep,
    language: Language | None = None,
    kind: Kind | None = None,
    validity: Validity | None = None,
    repo: Annotated[str | None, Query(max_length=500, description="substring")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
) -> TaskPage:
    chosen = TaskSelection(
        language=language,
        kind=kind,
        validity=validity,
        repo=repo,
    )
    rows, total = store.list_tasks(pool, selection_filter(chosen), limit, offset)
    return TaskPage(tasks=[task_summary(r) for r in rows], total=total, limit=limit, offset=offset)


@router.get(
    "/report",
    operation_id="corpus_report",
    response_model=CorpusReportOut,
    responses={
        200: {
            "description": "JSON; with `format=csv`, one row per chosen instance as a CSV file",
            "content": {"text/csv": {"schema": {"type": "string"}}},
        },
        **error_responses(422),
    },
)
def get_report(
    pool: PoolDep,
    language: Annotated[
        str | None, Query(max_length=40, description="rows of this language")
    ] = None,
    stage: Annotated[Stage | None, Query(description="rows that stopped at this stage")] = None,
    format: Annotated[ReportFormat, Query(description="json, or csv (a download)")] = "json",
) -> CorpusReportOut | Response:
    """Each instance imported or refused: the stage it reached (refused, imported, environment
    built, validated, playable) and the reason category where it stopped; counts per language x
    stage and per category. The service keeps no image state: a task's environment counts as
    built once its validation ran (see arena.tasks.report)."""
    library = [LibraryTask(t) for t in store.tasks_matching(pool, store.TaskFilter())]
    report = corpus_report(refusals_store.list_refusals(pool), library)
    out = CorpusReportOut.of(report, language, stage)
    if format == "csv":
        chosen = {r.instance_id for r in out.rows}
        body = csv_text(r for r in report.rows if r.instance_id in chosen)
        name = "corpus-report" + "".join(f"_{v}" for v in (language, stage) if v)
        return Response(
            content=body,
            media_type="text/csv",
            headers={"Content-Disposition": f'attachment; filename="{_file_safe(name)}.csv"'},
        )
    return out


def _file_safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in name)


def selection_filter(chosen: TaskSelection) -> store.TaskFilter:
    return store.TaskFilter(**chosen.model_dump())


def _get(pool: PoolDep, instance_id: str) -> DictRow:
    row = store.get_task(pool, instance_id)
    if row is None:
        raise not_found(["path", "instance_id"], f"no task {instance_id!r}")
    return row


@router.get("/{instance_id}", operation_id="get_task", responses=error_responses(401, 404, 422))
def get_task(instance_id: InstancePath, pool: PoolDep, admin: IsAdmin) -> TaskDetail:
    """The gold patch and tests only with the admin token: a model with web access could
    otherwise read the answer from the service that ranks it."""
    row = _get(pool, instance_id)
    task = row["task"]
    return TaskDetail(
        **task_summary(row).model_dump(),
        problem_statement=task.get("problem_statement", ""),
        hints_text=task.get("hints_text", ""),
        patch=task.get("patch", "") if admin else None,
        test_patch=task.get("test_patch", "") if admin else None,
        gold_access="shown" if admin else "admin_only",
        fingerprint=row["fingerprint"],
        pipeline=task.get("pipeline"),
        validation=row["validation"],
        validated_at=row["validated_at"],
        ci_legs=LegOut.ranked(task.get("ci_legs") or []),
        toolchain_request=task.get("toolchain_request"),
        skipped_actions=list(task.get("skipped_actions") or ()),
        workflow_notes=list(task.get("workflow_notes") or ()),
    )


@router.post(
    "/{instance_id}/validate",
    operation_id="validate_task",
    status_code=status.HTTP_202_ACCEPTED,
    dependencies=[Admin],
    responses=error_responses(401, 404, 422),
)
def validate_task(instance_id: InstancePath, s: ServicesDep) -> ValidationQueued:
    """A CI worker validates the task (once per fingerprint: a known verdict is kept)."""
    row = _get(s.pool, instance_id)
    validity = _validity(row)
    if validity == "unvalidated":
        enqueue(s.queue, TaskName.PREPARE, (int(row["id"]),), Queue.CI)
    return ValidationQueued(
        instance_id=instance_id,
        status="queued" if validity == "unvalidated" else "done",
        validity=validity,
    )
