"""The corpus report: for each instance the stage it reached and why it stopped there.

A pure function (`corpus_report`) from the refused import lines and the library's tasks (with
what is known of their environments) to one row per instance and counts per language x stage
and per category. The CLI (`arena tasks report`) and the API (`GET /api/tasks/report`) only
gather its inputs.

Stages, in order; an instance's stage is the last one it reached:

- `refused`: the import line did not become a task (bad line, repo or commit out of reach, no
  Linux test job Arena can run...). Its category is the importer's reason for the line.
- `imported`: the line is a task in the library. With import checks on (the default) its repo
  and commit were reached and a pipeline was derived from its CI job; a task imported with
  `--no-check` has none yet and stops here until validation derives one.
- `environment built`: its environment image is built (the engine says so), or none is needed
  (the task names an image, or its pipeline has no setup steps). Where the engine cannot be asked
  (no Docker engine; the service, which keeps no image state), a validation that ran is the
  evidence: validation runs the pipeline in that environment.
- `validated`: validation ran on the task as it is now (the verdict's fingerprint is the task's)
  and judged it valid.
- `playable`: valid, and its environment is not known to be broken. Arena cannot see more than
  this: the reference run that judges a match is the validation's own gold run, so it exists
  whenever the task is valid, and a missing environment image is built again on first play.
  So playable == valid and environment built; a valid task stops at `validated` only when the
  engine now reports that its environment build failed.

`category` names why an instance stopped where it did (None for playable ones); `reason` gives
the full text. Categories come from the importer's reasons as they are, except that
`categorize` folds the free-text ones (bad fields, validation verdicts) into a small set.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from arena.tasks.json_records import TOO_DEEP
from arena.tasks.refusals import Refusal
from arena.tasks.schema import Task
from arena.tasks.unnamed_tests import MARK as UNNAMED_MARK
from ci_runner import LIMITS_HINT

UNKNOWN_LANGUAGE = "unknown"


class Stage(StrEnum):
    REFUSED = "refused"
    IMPORTED = "imported"
    ENVIRONMENT_BUILT = "environment built"
    VALIDATED = "validated"
    PLAYABLE = "playable"


STAGES = tuple(Stage)


class Environment(StrEnum):
    """What the engine says of a task's environment image (the report decides "none needed")."""

    BUILT = "built"
    FAILED = "failed"
    NOT_BUILT = "not built"
    NONE_NEEDED = "none needed"  # nothing to set up or fetch: the toolchain image serves
    UNKNOWN = "unknown"  # no engine to ask


# categories this module gives itself (others are the importer's reasons, kept as they are)
DATASET_LINE = "dataset line inconsistent"
NEEDS_CONDA = "needs conda"
NOT_OS = "Windows or macOS only"
NEEDS_DOCKER = "needs Docker in the job"
NEEDS_ARTIFACTS = "needs another job's artifacts"
NO_TEST_JOB = "no usable CI job"
PIPELINE_NOT_DERIVED = "pipeline not derived"
ENV_FAILED = "environment build failed"
UNREACHABLE_HOST = "needs a host this machine cannot reach"
NEEDS_SERVICE = "needs a service Arena does not run"  # a job's `services:` image it lacks
NEEDS_PPA = "needs an Ubuntu PPA"  # Launchpad's archives are Ubuntu's; Arena's images Debian
# the warm-up found the toolchain too old for the code (ci_runner.warmup): the newest this
# machine's images have (Debian's) is older than the one the repository needs
NEWER_TOOLCHAIN = "needs a newer toolchain than this machine has"
NOT_BUILT = "not yet built"
NOT_VALIDATED = "not yet validated"
STALE = "validation stale (task changed)"
NO_GOLD_PATCH = "no gold patch"
DO_NOT_APPLY = "gold patch or tests do not apply"
NO_TEST_RAN = "no test ran"
# finer kinds of "no test ran", by what the steps did
NO_REPORT = "tests ran, no report Arena reads"  # every step ended well; nothing read of it
# ... and the output names none of the tests the gold tests add (arena.tasks.unnamed_tests)
NO_TEST_NAMED = "tests report no result by name"
COMMAND_MISSING = "a CI step's command is missing"  # exit 127: not in the environment
BREAKS_TESTS = "gold patch breaks passing tests"
NOT_FAILING = "gold tests do not fail without the fix"
# a run failed on the sandbox's size (disk full, a compiler killed for memory): whatever the
# verdict says next, it rests on a run the settings cut short (ci_runner.outcome)
SANDBOX_LIMITS = "needs more than the sandbox's limits"
OTHER_INVALID = "invalid (other reason)"

_IMPORT_REASONS = {
    "not JSON": DATASET_LINE,
    TOO_DEEP: DATASET_LINE,
    "duplicate": DATASET_LINE,
    "conda job (unsupported)": NEEDS_CONDA,
}
# what a job needs that Arena does not provide, read from a "no pipeline: ..." validation reason
_UNSUPPORTED = (
    ("another job built", NEEDS_ARTIFACTS),  # its lead's words, in no other reason
    ("conda", NEEDS_CONDA),
    ("windows", NOT_OS),
    ("macos", NOT_OS),
    ("docker", NEEDS_DOCKER),
)
# validation verdicts (arena.validation), by how their text starts or what it says
_VERDICTS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), category)
    for pattern, category in (
        (r"^environment build failed", ENV_FAILED),
        (r"^the task has no gold patch", NO_GOLD_PATCH),
        (r"^the gold (patch and )?tests do not apply", DO_NOT_APPLY),
        (r"^base \+ gold patch ran no test", NO_TEST_RAN),
        (r"^the gold patch breaks tests that passed", BREAKS_TESTS),
        (r"^no test fails without the gold patch", NOT_FAILING),
    )
)


# a job's service container Arena has no offline image for (ci_runner.services)
_UNKNOWN_SERVICE = re.compile(r"service image '[^']*' cannot run offline")
# a build that failed because a dependency lives on a host the machine does not reach (a git
# dependency on github.com, a binary from a vendor's server): not the task's fault, nor Arena's
_UNREACHABLE = re.compile(
    r"Could not resolve host(?:name)?|Temporary failure in name resolution"
    r"|Name or service not known|getaddrinfo (?:ENOTFOUND|EAI_AGAIN)|Network is unreachable"
    # a registry this machine reaches that does not serve the version (the Go proxy's 403)
    r"|This module version is not available"
)


# a setup step adding a Launchpad PPA (`add-apt-repository ppa:deadsnakes/ppa`) that failed
# there: add-apt-repository's own failure (its Python module, Launchpad) follows the command
_PPA = re.compile(r"(?:add-apt-repository|apt-add-repository)\b[^\n]*\bppa:")
_PPA_FAILED = re.compile(r"softwareproperties|launchpad", re.IGNORECASE)


_TOO_OLD = re.compile(r"\(the \w+ toolchain is too old: ")


def _environment_category(reason: str) -> str:
    if (ppa := _PPA.search(reason)) is not None and _PPA_FAILED.search(reason, ppa.end()):
        return NEEDS_PPA
    if _TOO_OLD.search(reason):
        return NEWER_TOOLCHAIN
    if _UNREACHABLE.search(reason):
        return UNREACHABLE_HOST
    return NEEDS_SERVICE if _UNKNOWN_SERVICE.search(reason) else ENV_FAILED


def categorize(reason: str, *, validation: bool = False) -> str:
    """The one place reason texts become categories.

    An importer reason (LineError.reason, UnsupportedTask.reason) is a category already and is
    kept as it is, except the per-field ones (`missing x`, `bad x`, `not JSON`, `JSON nested too
    deep`, `duplicate`: the dataset line is inconsistent) and the conda one (`needs conda`). A
    validation reason is free text: it maps to a small set, `invalid (other reason)` when
    nothing matches.
    """
    text = reason.strip()
    if not validation:
        if text in _IMPORT_REASONS:
            return _IMPORT_REASONS[text]
        return DATASET_LINE if text.startswith(("missing ", "bad ")) else text
    if text.startswith("no pipeline:"):
        lowered = text.lower()
        return next((c for word, c in _UNSUPPORTED if word in lowered), NO_TEST_JOB)
    category = next((c for pattern, c in _VERDICTS if pattern.search(text)), OTHER_INVALID)
    if category != ENV_FAILED and LIMITS_HINT in text:
        return SANDBOX_LIMITS
    if category == NO_TEST_RAN:
        return _no_test_category(text)
    return _environment_category(text) if category == ENV_FAILED else category


_COMMAND_MISSING = re.compile(r"failed with exit code 127\b")
_UNREAD_REPORT = re.compile(r"\((?:error: )?the \S+ report (?:is empty|names no tests)\)")


def _no_test_category(reason: str) -> str:
    """Why the run of `base + gold patch` ran no test, as far as its reason tells: a step's
    command not found (exit 127), or steps that all ended well with nothing Arena can read,
    told apart by whether their output names a test the gold tests add (no: a harness of the
    project's own that reports no test by name)."""
    if _COMMAND_MISSING.search(reason):
        return COMMAND_MISSING
    if _UNREAD_REPORT.search(reason):
        return NO_TEST_NAMED if UNNAMED_MARK in reason else NO_REPORT
    return NO_TEST_RAN


@dataclass(frozen=True)
class LibraryTask:
    """A task in the library and what the engine says of its environment."""

    task: Task
    environment: Environment = Environment.UNKNOWN
    environment_error: str | None = None


@dataclass(frozen=True)
class InstanceStatus:
    instance_id: str
    language: str
    repo: str | None
    stage: Stage
    category: str | None  # why it stopped at `stage`; None when playable
    reason: str | None  # the full text behind the category
    chosen_leg: str | None  # the CI job leg its pipeline came from
    legs_considered: int  # job legs the import weighed (0 when unknown)
    source_file: str | None  # the file a refused line came from


@dataclass(frozen=True)
class CategoryCount:
    category: str
    stage: Stage  # where instances of this category stopped (the earliest, if several)
    count: int
    by_language: dict[str, int]


@dataclass(frozen=True)
class CorpusReport:
    rows: tuple[InstanceStatus, ...]
    # language -> stage -> instances that stopped at that stage (every stage present)
    by_language: dict[str, dict[Stage, int]] = field(default_factory=dict)
    by_category: tuple[CategoryCount, ...] = ()

    def reached(self, language: str, stage: Stage) -> int:
        """Instances of `language` that reached `stage` or a later one."""
        later = STAGES[STAGES.index(stage) :]
        return sum(self.by_language.get(language, {}).get(s, 0) for s in later)


def legs_of(task: Task) -> tuple[str | None, int]:
    """The chosen job leg and how many legs the import weighed.

    From `Task.ci_legs` where the task has it (every leg considered, with its status, on the
    lead's branch), else from what `with_pipeline` keeps today: `ci_job`, and one `leg ...:`
    line of `workflow_notes` per leg considered. A task without a derived pipeline weighed none.
    """
    legs = getattr(task, "ci_legs", ())
    if legs:
        chosen = [f"{c.leg} @ {c.workflow}" for c in legs if c.status == "chosen"]
        return (chosen[0] if chosen else task.ci_job), len(legs)
    considered = sum(1 for note in task.workflow_notes if note.startswith("leg "))
    return task.ci_job, considered


def _refused(refusal: Refusal) -> InstanceStatus:
    return InstanceStatus(
        instance_id=refusal.key,
        language=refusal.language or UNKNOWN_LANGUAGE,
        repo=refusal.repo,
        stage=Stage.REFUSED,
        category=categorize(refusal.reason),
        reason=refusal.text,
        chosen_leg=None,
        legs_considered=0,
        source_file=refusal.source_file,
    )


def _needs_no_environment(entry: LibraryTask) -> bool:
    """The engine said so; without one, a task without setup steps is taken to need none
    (a Go or Rust task may still need its modules or crates fetched)."""
    task = entry.task
    if task.image is not None or entry.environment is Environment.NONE_NEEDED:
        return True
    unknown = entry.environment is Environment.UNKNOWN
    return unknown and task.pipeline is not None and not task.pipeline.setup


def _stage_of(entry: LibraryTask) -> tuple[Stage, str | None, str | None]:
    """(stage, category, reason) of a library task; see the module docstring."""
    task = entry.task
    v = task.validation
    current = v is not None and (v.fingerprint is None or v.fingerprint == task.fingerprint())
    if v is not None and current and v.reason and not v.valid:
        category = categorize(v.reason, validation=True)
        if category in (
            NO_TEST_JOB,
            NEEDS_CONDA,
            NOT_OS,
            NEEDS_DOCKER,
            NEEDS_ARTIFACTS,
            ENV_FAILED,
            UNREACHABLE_HOST,
            NEEDS_SERVICE,
            NEWER_TOOLCHAIN,
        ):
            return Stage.IMPORTED, category, v.reason  # no pipeline, or no environment for it
    if entry.environment is Environment.FAILED:
        reason = f"environment build failed: {entry.environment_error or 'no message kept'}"
        stopped = _environment_category(reason)
        if v is not None and current and v.valid:
            return Stage.VALIDATED, stopped, reason
        return Stage.IMPORTED, stopped, reason
    built = (
        _needs_no_environment(entry)
        or entry.environment is Environment.BUILT
        or (v is not None and current)  # validation ran the pipeline in its environment
    )
    if not built:
        if task.pipeline is None:
            why = "imported without checks: its pipeline is derived from its CI job on validation"
            return Stage.IMPORTED, PIPELINE_NOT_DERIVED, why
        if v is not None:  # stale: the verdict was for another version of the task
            return Stage.IMPORTED, STALE, "the task changed since it was validated"
        how = "arena tasks build-env or validation builds it"
        if entry.environment is Environment.UNKNOWN:
            how += " (its image state is not known here)"
        return Stage.IMPORTED, NOT_BUILT, how
    if v is None:
        return Stage.ENVIRONMENT_BUILT, NOT_VALIDATED, None
    if not current:
        return Stage.ENVIRONMENT_BUILT, STALE, "the task changed since it was validated"
    if not v.valid:
        return Stage.ENVIRONMENT_BUILT, categorize(v.reason or "", validation=True), v.reason
    return Stage.PLAYABLE, None, None


def _library_row(entry: LibraryTask) -> InstanceStatus:
    stage, category, reason = _stage_of(entry)
    chosen, considered = legs_of(entry.task)
    return InstanceStatus(
        instance_id=entry.task.instance_id,
        language=entry.task.language.value,
        repo=entry.task.repo,
        stage=stage,
        category=category,
        reason=reason,
        chosen_leg=chosen,
        legs_considered=considered,
        source_file=None,
    )


def corpus_report(refusals: Iterable[Refusal], tasks: Iterable[LibraryTask]) -> CorpusReport:
    """Pure: the report of the refused lines and the library's tasks.

    An instance both refused and in the library (imported once, refused on a later import) is
    reported as its library task: that one still runs."""
    library = [_library_row(t) for t in tasks]
    known = {r.instance_id for r in library}
    refused = [_refused(r) for r in refusals if r.instance_id not in known]
    rows = tuple(sorted(refused + library, key=lambda r: (r.language, r.instance_id)))
    return CorpusReport(rows=rows, by_language=_by_language(rows), by_category=_by_category(rows))


def _by_language(rows: Sequence[InstanceStatus]) -> dict[str, dict[Stage, int]]:
    counts = Counter((r.language, r.stage) for r in rows)
    languages = sorted({r.language for r in rows})
    return {lang: {s: counts[(lang, s)] for s in STAGES} for lang in languages}


def _by_category(rows: Sequence[InstanceStatus]) -> tuple[CategoryCount, ...]:
    stopped = [r for r in rows if r.category is not None]
    found = []
    for category in {r.category for r in stopped}:
        assert category is not None
        mine = [r for r in stopped if r.category == category]
        found.append(
            CategoryCount(
                category=category,
                stage=min((r.stage for r in mine), key=STAGES.index),
                count=len(mine),
                by_language=dict(sorted(Counter(r.language for r in mine).items())),
            )
        )
    return tuple(sorted(found, key=lambda c: (-c.count, STAGES.index(c.stage), c.category)))


CSV_COLUMNS = (
    "instance_id",
    "language",
    "repo",
    "stage",
    "category",
    "reason",
    "chosen_leg",
    "legs_considered",
    "source_file",
)


def csv_text(rows: Iterable[InstanceStatus]) -> str:
    """The rows as CSV (RFC 4180), one line per instance; cells a spreadsheet would run as a
    formula (starting with = + - @) are kept text with a leading quote."""
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        cells = [getattr(row, c) for c in CSV_COLUMNS]
        writer.writerow(["" if c is None else _safe_cell(str(c)) for c in cells])
    return out.getvalue()


def _safe_cell(text: str) -> str:
    """OWASP's CSV injection rule, spaces before the formula included (` =1+2` runs too)."""
    formula = text[:1] in ("\t", "\r") or text.lstrip(" \t\r\n")[:1] in ("=", "+", "-", "@")
    return f"'{text}" if formula else text
