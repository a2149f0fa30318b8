"""Tasks as the API shows them, and what an import reports line by line."""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict
from typing import Any, Literal

from pydantic import BaseModel, Field

from api.schemas.common import GOLD_ACCESS_HELP, GoldAccess
from arena.tasks.report import STAGES, CorpusReport

Validity = Literal["valid", "invalid", "unvalidated"]
Kind = Literal["gold-judged", "ci-judged"]
# a leg's fate: the pipeline's own (`chosen`), validated without a test the gold patch fixes
# (`tried`), usable but not tried (`candidate`), never usable (`rejected`)
LegStatus = Literal["chosen", "tried", "candidate", "rejected"]


class LegOut(BaseModel):
    """One CI job leg considered for a task's pipeline, and what became of it."""

    leg: str  # the job's display name with its matrix values
    workflow: str
    job_id: str
    status: LegStatus
    why: str  # for `tried`: the validation's outcome on it; for `rejected`: why never usable
    category: str | None  # a rejected leg's reason category
    rank: int | None  # 1 = best; null for a rejected leg

    @classmethod
    def ranked(cls, legs: list[dict[str, Any]]) -> list[LegOut]:
        """Stored legs best-ranked first; rejected ones (no rank) last, in the order weighed."""
        found = [cls.model_validate(leg) for leg in legs]
        return sorted(found, key=lambda leg: (leg.rank is None, leg.rank or 0))


class TaskSummary(BaseModel):
    instance_id: str
    language: str  # what it runs as: the language of its gold tests and patch
    # the language the dataset filed it under, when that is another one (null: the same)
    filed_language: str | None = None
    kind: str
    repo: str
    base_commit: str
    issue_created_at: str | None
    validity: Validity
    validation_reason: str | None
    # test counts as validation found them (null until validated): FAIL_TO_PASS, PASS_TO_PASS,
    # and those left out (flaky between two runs; broken: failing with and without the fix)
    fail_to_pass: int | None
    pass_to_pass: int | None
    flaky: int | None
    broken: int | None
    imported_at: dt.datetime
    ci_job: str | None  # the leg the pipeline came from (`leg @ workflow`)
    legs_considered: int  # job legs weighed for the pipeline (0: its own steps, or not derived)
    # how the environment deviates from what the job asks ("job asks Python 3.12; ran on 3.13");
    # empty when it is what the job asks (or not built yet)
    environment_notes: list[str]


class TaskDetail(TaskSummary):
    problem_statement: str
    hints_text: str
    patch: str | None = Field(description="the gold patch; null unless gold_access is `shown`")
    test_patch: str | None = Field(description="the gold tests; null unless gold_access is `shown`")
    gold_access: GoldAccess = Field(description=GOLD_ACCESS_HELP)
    fingerprint: str
    pipeline: dict[str, Any] | None
    validation: dict[str, Any] | None
    validated_at: dt.datetime | None
    ci_legs: list[LegOut]  # every leg considered, in rank order, rejected ones last
    toolchain_request: str | None  # the toolchain version the chosen job asks for
    skipped_actions: list[str]  # the chosen job's actions left out of the pipeline
    workflow_notes: list[str]  # each leg and step decision, with why


class TaskPage(BaseModel):
    tasks: list[TaskSummary]
    total: int
    limit: int
    offset: int


class ImportedTask(BaseModel):
    instance_id: str
    new: bool  # False: the same task (same fingerprint) was stored before


class LineProblem(BaseModel):
    line: int
    field: str
    problem: str


class ImportReport(BaseModel):
    imported: list[ImportedTask]
    errors: list[LineProblem]


class ValidationQueued(BaseModel):
    instance_id: str
    status: Literal["queued", "done"]
    validity: Validity


Stage = Literal["refused", "imported", "environment built", "validated", "playable"]
ReportFormat = Literal["json", "csv"]


class InstanceStatusOut(BaseModel):
    """One instance of the corpus: the stage it reached and why it stopped there."""

    instance_id: str  # a refused line without a readable one: `file:line`
    language: str  # `unknown` when a refused line gives none
    repo: str | None
    stage: Stage
    category: str | None  # why it stopped at `stage`; null when playable
    reason: str | None
    chosen_leg: str | None
    legs_considered: int
    source_file: str | None


class LanguageStages(BaseModel):
    language: str
    stages: dict[str, int]  # every stage -> instances that stopped there
    total: int


class CategoryCountOut(BaseModel):
    category: str
    stage: Stage
    count: int
    by_language: dict[str, int]


class CorpusReportOut(BaseModel):
    """Counts cover the whole corpus; `rows` only the instances the filters chose."""

    stages: list[Stage]
    by_language: list[LanguageStages]
    by_category: list[CategoryCountOut]
    total: int
    rows: list[InstanceStatusOut]

    @classmethod
    def of(
        cls, report: CorpusReport, language: str | None = None, stage: str | None = None
    ) -> CorpusReportOut:
        """The report as the API and `arena tasks report --json` show it; filters choose rows."""
        rows = [
            r
            for r in report.rows
            if (language is None or r.language == language) and (stage is None or r.stage == stage)
        ]
        return cls(
            stages=[s.value for s in STAGES],
            by_language=[
                LanguageStages(
                    language=lang,
                    stages={s.value: n for s, n in counts.items()},
                    total=sum(counts.values()),
                )
                for lang, counts in report.by_language.items()
            ],
            by_category=[CategoryCountOut.model_validate(asdict(c)) for c in report.by_category],
            total=len(report.rows),
            rows=[InstanceStatusOut.model_validate(asdict(r)) for r in rows],
        )
