"""/api/matches: the list with filters, and one match's whole evidence."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from fastapi.responses import Response

from api.deps import IsAdmin, PoolDep, ServicesDep
from api.errors import ApiError, not_found
from api.schemas.common import GoldAccess, error_responses
from api.schemas.matches import (
    AnswerEvidence,
    MatchEvidence,
    MatchPage,
    MatchSummary,
    RoundEvidence,
    StatusFilter,
    TaskEvidence,
)
from arena.store import evidence as store
from arena.store.pool import Pool
from arena.tasks.schema import Language
from arena.vocabulary import MatchStatus

router = APIRouter(prefix="/matches", tags=["matches"])
_FACTS = ("patch_applies", "patch_correct", "tests_valid", "tests_catch")
# A match's page shows what could hand a playing model the answer only once the match is over:
# the gold patch and tests, the answers' text and diffs (the oracle answers the gold patch, and
# round 2's submitter must not read round 1's patch) and the CI logs (a traceback shows the gold
# code and tests). Never while it is queued or running; a cancelled match never finished.
FINISHED = frozenset({MatchStatus.DONE, MatchStatus.FAILED, MatchStatus.SKIPPED})
WITHHELD = (
    "Until the match has finished, its answers' text and diffs, CI logs and gold patch and tests"
    " are withheld: a playing model must not read the answer here."
)
WITHHELD_PLAYABLE = (
    "The task can be played again: the answers' text and diffs, CI logs and gold patch and tests"
    " of its finished matches are the admin's (ARENA_MATCH_GOLD_PUBLIC=true shows them to all,"
    " for a corpus no tournament will play again)."
)
WITHHELD_CANCELLED = (
    "The match was cancelled before it finished: its answers' text and diffs, CI logs and gold"
    " patch and tests stay withheld (the admin reads the gold on the task)."
)


def _summary(row: Mapping[str, Any]) -> MatchSummary:
    return MatchSummary.model_validate(dict(row))


@router.get("", operation_id="list_matches", responses=error_responses(422))
def list_matches(
    pool: PoolDep,
    tournament: Annotated[int | None, Query(ge=1, le=2**62)] = None,
    model: Annotated[str | None, Query(max_length=200, description="played a or b")] = None,
    opponent: Annotated[
        str | None, Query(max_length=200, description="with model: played against model")
    ] = None,
    task: Annotated[str | None, Query(max_length=500, description="instance id")] = None,
    language: Language | None = None,
    result: Annotated[str | None, Query(max_length=200, description="winner or tie")] = None,
    status: StatusFilter | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
) -> MatchPage:
    """Newest first."""
    if opponent is not None and model is None:
        raise ApiError(422, ["query", "opponent"], "an opponent needs a model to play against")
    chosen = store.MatchFilter(
        tournament=tournament,
        model=model,
        opponent=opponent,
        task=task,
        language=None if language is None else language.value,
        result=result,
        status=None if status is None else MatchStatus(status),
    )
    rows, total = store.list_matches(pool, chosen, limit, offset)
    return MatchPage(matches=[_summary(r) for r in rows], total=total, limit=limit, offset=offset)


def _cost(row: Mapping[str, Any]) -> float | None:
    if row["price_input"] is None and row["price_output"] is None:
        return None
    cost: float = (
        row["prompt_tokens"] * (row["price_input"] or 0.0)
        + row["completion_tokens"] * (row["price_output"] or 0.0)
    ) / 1e6
    return cost


def _answer(row: Mapping[str, Any], finished: bool) -> AnswerEvidence:
    given: dict[str, Any] = row["answer"]
    return AnswerEvidence(
        role=row["role"],
        model=row["model"],
        raw_text=given.get("raw_text", "") if finished else None,
        diff=given.get("diff") if finished else None,
        parse_error=given.get("parse_error"),
        error=given.get("error"),
        latency_s=row["latency_s"],
        prompt_tokens=row["prompt_tokens"],
        completion_tokens=row["completion_tokens"],
        cost=_cost(row),
    )


def _without_logs(runs: dict[str, Any]) -> dict[str, Any]:
    """Each CI run with its steps' logs emptied (statuses, times and tests stay)."""
    return {
        label: {**run, "steps": [{**step, "log": ""} for step in run.get("steps") or ()]}
        if isinstance(run, dict)
        else run
        for label, run in runs.items()
    }


def _round(row: Mapping[str, Any], answers: list[AnswerEvidence], finished: bool) -> RoundEvidence:
    record: dict[str, Any] = row["record"] or {}
    runs: dict[str, Any] = record.get("runs", {})
    role = row["winner"]
    winner = {"submitter": row["submitter"], "reviewer": row["reviewer"]}.get(role, role)
    return RoundEvidence(
        idx=row["idx"],
        submitter=row["submitter"],
        reviewer=row["reviewer"],
        answers=answers,
        judged=row["record"] is not None,
        winner=winner,
        winner_role=role,
        facts={f: bool(record[f]) for f in _FACTS if f in record},
        reasons=record.get("reasons", {}),
        runs=runs if finished else _without_logs(runs),
        finished_at=row["finished_at"],
    )


@router.get(
    "/{match_id}",
    operation_id="get_match",
    response_model=MatchEvidence,
    responses=error_responses(401, 404, 422),
)
def get_match(
    match_id: Annotated[int, Path(ge=1, le=2**62)], pool: PoolDep, s: ServicesDep, admin: IsAdmin
) -> Response:
    """Task and issue, both rounds with answers and diffs, every CI run, facts and reasons.
    Until the match has finished (done, failed, skipped) the answers' text and diffs, the CI
    logs and the gold patch and tests are left out (`withheld` says so); once it has, they are
    the admin's, or everyone's with ARENA_MATCH_GOLD_PUBLIC (its task can be played again).

    Serialized once here: returned as a model, FastAPI would validate the whole evidence (CI
    logs included) a second time before serializing it."""
    reader_sees_gold = admin or s.settings.match_gold_public
    return Response(
        content=_evidence(match_id, pool, reader_sees_gold).model_dump_json(),
        media_type="application/json",
    )


def _gold_access(status: MatchStatus, shown: bool) -> GoldAccess:
    if status in FINISHED:
        return "shown" if shown else "admin_only"
    return "admin_only" if status is MatchStatus.CANCELLED else "after_match"


def _withheld(status: MatchStatus, shown: bool) -> str | None:
    if status is MatchStatus.CANCELLED:
        return WITHHELD_CANCELLED
    if status not in FINISHED:
        return WITHHELD
    return None if shown else WITHHELD_PLAYABLE


def _evidence(match_id: int, pool: Pool, reader_sees_gold: bool) -> MatchEvidence:
    found = store.match_evidence(pool, match_id)
    if found is None:
        raise not_found(["path", "match_id"], f"no match {match_id}")
    status = MatchStatus(found.match["status"])
    finished = status in FINISHED and reader_sees_gold
    answers = [_answer(a, finished) for a in found.answers]
    by_round: dict[int, list[AnswerEvidence]] = {}
    for row, shown in zip(found.answers, answers, strict=True):
        by_round.setdefault(row["idx"], []).append(shown)
    costs = [a.cost for a in answers if a.cost is not None]
    task = found.task
    return MatchEvidence(
        **_summary(found.match).model_dump(),
        task_detail=TaskEvidence(
            instance_id=task["instance_id"],
            language=task["language"],
            kind=found.match["kind"],
            repo=task["repo"],
            base_commit=task["base_commit"],
            problem_statement=task.get("problem_statement", ""),
            hints_text=task.get("hints_text", ""),
            validation=found.validation,
            patch=task.get("patch", "") if finished else None,
            test_patch=task.get("test_patch", "") if finished else None,
            gold_access=_gold_access(status, reader_sees_gold),
        ),
        withheld=_withheld(status, reader_sees_gold),
        rounds=[_round(r, by_round.get(r["idx"], []), finished) for r in found.rounds],
        latency_s=sum(a.latency_s for a in answers),
        prompt_tokens=sum(a.prompt_tokens for a in answers),
        completion_tokens=sum(a.completion_tokens for a in answers),
        cost=sum(costs) if costs else None,
    )
