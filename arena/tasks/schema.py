"""The task schema (SwingArena and SWE-bench field names, plus our pipeline)."""

from __future__ import annotations

import ast
import hashlib
import json
import re
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_serializer,
    field_validator,
    model_validator,
)

import ci_runner
from arena.languages import Language as Language
from arena.languages import language_named
from arena.tasks.json_records import JsonRecordError, load_json
from ci_runner import ANY_JOB, ForeignImage, JobRef, Pipeline, require_arena_image

_GITHUB_SLUG = re.compile(r"^[\w.-]+/[\w.-]+$")
_WORKFLOW_PATH = re.compile(r"\.ya?ml$")
_COMMIT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # SHA-1, or SHA-256 repos
_MAX_ENTRY = 10_000


def repo_source(repo: str) -> str:
    """Where a line's `repo` is fetched from: GitHub's `owner/name` as its URL (unless a
    local folder has that name), anything else as it is."""
    if _GITHUB_SLUG.match(repo) and not Path(repo).exists():
        return f"https://github.com/{repo}.git"
    return repo


def language_of(name: str) -> Language | None:
    """A language named by text such as `Go`, `c++` or a file name `cpp_filtered_....jsonl`."""
    return language_named(name)


def job_refs(entries: Any) -> list[JobRef]:
    """`ci_name_list` as SwingArena ships it: job names, `[display name, workflow path]` pairs,
    or such pairs written as Python-repr strings (read with ast.literal_eval), nested in lists.

    A string is read as a literal only when it parses as a list or tuple of names and pairs;
    any other string is a job name, even one that begins with `[` (`[1.21] test`)."""
    if not isinstance(entries, list | tuple):
        raise ValueError(f"must be a list of job names or [name, workflow] pairs, got {entries!r}")
    refs: list[JobRef] = []
    for entry in entries:
        refs.extend(_entry_refs(entry, depth=0))
    return refs


def _literal(text: str) -> list[Any] | tuple[Any, ...] | None:
    """`text` as a list/tuple literal of names and pairs, or None if it is not one."""
    if not text.startswith(("[", "(")) or len(text) > _MAX_ENTRY:
        return None
    try:
        parsed = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return parsed if isinstance(parsed, list | tuple) and parsed and _names(parsed, 0) else None


def _names(value: Any, depth: int) -> bool:
    """Only non-empty strings, in lists or tuples nested no deeper than a pair in a list."""
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, list | tuple) and depth < 3:
        return bool(value) and all(_names(v, depth + 1) for v in value)
    return False


def _entry_refs(entry: Any, depth: int) -> list[JobRef]:
    if depth > 4:
        raise ValueError("ci_name_list entries are nested too deeply")
    if isinstance(entry, JobRef):
        return [entry]
    if isinstance(entry, dict) and isinstance(entry.get("name"), str):
        workflow = entry.get("workflow")
        return [JobRef(entry["name"], workflow if isinstance(workflow, str) else None)]
    if isinstance(entry, str):
        text = entry.strip()
        if not text:
            raise ValueError("an entry of ci_name_list is empty")
        if (parsed := _literal(text)) is not None:
            return _entry_refs(parsed, depth + 1)
        return [JobRef(text)]
    if isinstance(entry, list | tuple):
        if (
            len(entry) == 2
            and all(isinstance(e, str) for e in entry)
            and _WORKFLOW_PATH.search(entry[1].strip())
            and _literal(entry[0].strip()) is None
        ):
            return [JobRef(entry[0].strip(), entry[1].strip())]
        return [ref for e in entry for ref in _entry_refs(e, depth + 1)]
    raise ValueError(f"an entry of ci_name_list is neither a name nor a pair: {entry!r}")


# Bumped whenever validation's rules or test ids change: 2 = two runs per tree, flaky and
# broken tests left out, CI-judged tasks, Rust doctest ids without line numbers; 3 = C++ test
# binaries registered once with ctest split into their cases; 4 = ctest names with spaces
# read whole from its console lines.
VALIDATION_RULES = 4


class TaskKind(StrEnum):
    """How a task's verdicts are judged: by its gold tests, or (without any) by CI alone."""

    GOLD_JUDGED = "gold-judged"
    CI_JUDGED = "ci-judged"


class TaskError(ValueError):
    """A task file or record is malformed; the message names the field at fault."""


class UnsupportedTask(TaskError):
    """The task needs what Arena does not provide (a conda environment); `reason` is what an
    import report counts it under."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class Validation(BaseModel):
    """The verdict of running the pipeline (with the gold tests) with and without the gold patch.

    `flaky` tests changed outcome between two runs of the same tree and `broken` ones fail on
    both trees: both are recorded and left out of every verdict."""

    model_config = ConfigDict(frozen=True)

    valid: bool
    reason: str | None = None
    kind: TaskKind = TaskKind.GOLD_JUDGED
    fail_to_pass: tuple[str, ...] = ()
    pass_to_pass: tuple[str, ...] = ()
    flaky: tuple[str, ...] = ()
    broken: tuple[str, ...] = ()
    # the runner's tripwire sites every run of `base + gold + gold tests` reported passed, and
    # how its report spells each site's test ids (ci_runner.tripwires); None: validated before
    # tripwires existed
    tripwire_sites: dict[str, str] | None = None
    # whether its runs of `base + gold + gold tests` carried a tripwire that must fail (where
    # one may, twins of the unseen tests go too): False marks the task unguarded, its runs
    # checked only for tripwires that must pass; None: validated before this was recorded
    guarded: bool | None = None
    fingerprint: str | None = None  # of the task it was computed for


class LegChoice(BaseModel):
    """One job leg considered for a task's pipeline, and what became of it.

    `status` is `chosen` (the pipeline's leg), `tried` (validated, and the gold patch did
    not turn tests from failing to passing on it: `why` says what happened), `candidate`
    (usable, not tried) or `rejected` (never usable: `why` and `category` say why)."""

    model_config = ConfigDict(frozen=True)

    leg: str
    workflow: str
    job_id: str = ""
    status: str
    why: str
    category: str | None = None
    rank: int | None = None

    @property
    def key(self) -> tuple[str, str]:
        """Which leg it is: its display name in its workflow file."""
        return self.leg, self.workflow


class CandidateLeg(BaseModel):
    """A usable leg's pipeline, kept so validation can move to it when a better-ranked leg
    runs no test the gold patch fixes."""

    model_config = ConfigDict(frozen=True)

    leg: str
    workflow: str
    pipeline: Pipeline
    skipped_actions: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    toolchain_request: str | None = None

    @property
    def ci_job(self) -> str:
        return f"{self.leg} @ {self.workflow}"

    @property
    def key(self) -> tuple[str, str]:
        return self.leg, self.workflow


class Task(BaseModel):
    """One issue to compete on. Field names follow SwingArena; SWE-bench's are accepted too."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    instance_id: str = Field(min_length=1)
    repo: str = Field(min_length=1, description="git URL, local path, or GitHub owner/name")
    base_commit: str = Field(description="the full commit id: 40 hex digits (64 for SHA-256)")
    language: Language
    pipeline: Pipeline | None = None
    ci_name_list: tuple[JobRef, ...] = ()
    image: str | None = Field(default=None, description="one of Arena's own images to run in")
    problem_statement: str = ""
    hints_text: str = ""
    patch: str = ""
    test_patch: str = ""
    created_at: str | None = None
    version: str | None = None
    fail_to_pass: tuple[str, ...] = Field(default=(), alias="FAIL_TO_PASS")
    pass_to_pass: tuple[str, ...] = Field(default=(), alias="PASS_TO_PASS")
    skipped_actions: tuple[str, ...] = ()
    ci_job: str | None = Field(default=None, description="the job leg the pipeline came from")
    toolchain_request: str | None = Field(
        default=None, description="the toolchain version the job asks for (setup action, matrix)"
    )
    workflow_notes: tuple[str, ...] = Field(
        default=(), description="every leg considered and every step decision, with why"
    )
    ci_legs: tuple[LegChoice, ...] = Field(
        default=(), description="every job leg considered, best-ranked first, with its fate"
    )
    ci_candidates: tuple[CandidateLeg, ...] = Field(
        default=(), description="the usable legs' pipelines, in rank order"
    )
    validation: Validation | None = None
    filed_language: str | None = Field(
        default=None,
        description="the language the dataset filed the line under, when its gold patch and "
        "tests are in another one Arena runs (`language`)",
    )
    # how the environment differs from what the job asks (toolchain version, relaxed constraints)
    environment_notes: tuple[str, ...] = ()

    @field_validator("language", mode="before")
    @classmethod
    def _language_alias(cls, value: Any) -> Any:
        if isinstance(value, str):
            return language_named(value) or value.strip().lower()
        return value

    @field_validator("base_commit")
    @classmethod
    def _full_commit_id(cls, value: str) -> str:
        """A branch, tag or short id names different commits as the repo moves on: a task is
        pinned to one, so only a full id is taken."""
        if _COMMIT_ID.fullmatch(value.strip().lower()) is None:
            raise ValueError(
                f"base_commit must be a full commit id (40 hex digits, or 64 for a SHA-256 "
                f"repo), not {value[:80]!r}"
            )
        return value.strip().lower()

    @field_validator("image")
    @classmethod
    def _arena_image(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return require_arena_image(value)
        except ForeignImage as exc:
            raise ValueError(f"image {exc}") from None

    @field_validator("repo")
    @classmethod
    def _github_slug(cls, value: str) -> str:
        return repo_source(value)

    @field_validator("fail_to_pass", "pass_to_pass", mode="before")
    @classmethod
    def _json_list(cls, value: Any) -> Any:
        """SWE-bench stores these lists as JSON text."""
        if isinstance(value, str):
            try:
                return load_json(value) if value.strip() else []
            except JsonRecordError as exc:
                raise ValueError(f"not a JSON list: {exc}") from None
        return value

    @field_validator("ci_name_list", mode="before")
    @classmethod
    def _job_refs(cls, value: Any, info: ValidationInfo) -> Any:
        """An empty list (the dataset has such lines) names no job: the repo's own test jobs,
        across all its workflows, are considered, as for a line without a pipeline."""
        refs = job_refs(cls._json_list(value))
        if not refs and info.data.get("pipeline") is None and "pipeline" in info.data:
            return [JobRef(ANY_JOB)]
        return refs

    @field_serializer("ci_name_list")
    def _pairs(self, refs: tuple[JobRef, ...]) -> list[Any]:
        """Written back in SwingArena's own shape: a name, or `[name, workflow path]`."""
        return [[r.name, r.workflow] if r.workflow else r.name for r in refs]

    @field_validator("version", "created_at", mode="before")
    @classmethod
    def _as_text(cls, value: Any) -> Any:
        return None if value is None else str(value)

    @model_validator(mode="after")
    def _needs_a_pipeline(self) -> Task:
        if self.pipeline is None and not self.ci_name_list:
            raise ValueError("pipeline is required unless ci_name_list names a workflow job")
        return self

    def on_leg(self, candidate: CandidateLeg) -> Task:
        """The task with `candidate`'s pipeline and the facts that go with it."""
        legs = tuple(
            leg.model_copy(update={"status": "chosen"})
            if leg.key == candidate.key
            else leg.model_copy(update={"status": "candidate"})
            if leg.status == "chosen"
            else leg
            for leg in self.ci_legs
        )
        return self.model_copy(
            update={
                "pipeline": candidate.pipeline,
                "skipped_actions": candidate.skipped_actions,
                "ci_job": candidate.ci_job,
                "workflow_notes": candidate.notes,
                "toolchain_request": candidate.toolchain_request,
                "ci_legs": legs,
            }
        )

    @property
    def kind(self) -> TaskKind:
        return TaskKind.GOLD_JUDGED if self.test_patch.strip() else TaskKind.CI_JUDGED

    def require_pipeline(self) -> Pipeline:
        if self.pipeline is None:
            raise TaskError(
                f"task {self.instance_id}: its pipeline was never derived from ci_name_list"
            )
        return self.pipeline

    def fingerprint(self) -> str:
        """Changes whenever anything that decides a verdict on this task changes, the rules
        included (VALIDATION_RULES, and RESULT_RULES: how a run's log and reports are read),
        so a stored verdict never outlives them."""
        decisive = self.model_dump(
            mode="json",
            include={
                "repo",
                "base_commit",
                "pipeline",
                "image",
                "patch",
                "test_patch",
                "language",
                "toolchain_request",
            },
        )
        decisive["validation_rules"] = VALIDATION_RULES
        decisive["result_rules"] = ci_runner.RESULT_RULES
        return hashlib.sha256(json.dumps(decisive, sort_keys=True).encode()).hexdigest()[:16]


def describe_validation_error(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(record)"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def load_task_file(path: Path) -> Task:
    try:
        raw = load_json(path.read_text())
    except FileNotFoundError as exc:
        raise TaskError(f"task file {path} does not exist") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskError(f"cannot read task file {path}: {exc}") from exc
    except JsonRecordError as exc:
        raise TaskError(f"task file {path}: {exc}") from None
    if not isinstance(raw, dict):
        raise TaskError(f"task file {path} must hold a JSON object")
    try:
        return Task.model_validate(raw)
    except ValidationError as exc:
        raise TaskError(f"task file {path}: {describe_validation_error(exc)}") from exc
