"""Trials: how much of a dataset runs on this machine, measured on a seeded random sample.

A trial takes each sampled line through every stage a user's line goes through (import,
environment build, validation, a match of `oracle` against `null`), one line at a time within a
time cap, and records the last stage it reached, why it stopped, whose fault that is, and the
time each stage took. This module is pure: which lines a seed samples, what a trial record
holds, whose fault a category is, and the counts per stage and category; `arena tasks trial`
runs the stages.

The sample is the first lines of each file ranked by `sha256(f"{seed}:{instance_id}")`, so a
sample is reproducible from its seed and never chosen by hand.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from arena.tasks.json_records import JsonRecordError, load_json
from arena.tasks.record_files import read_records, write_records


class TrialStage(StrEnum):
    """The last stage a sampled line reached, in order."""

    REFUSED = "refused"
    IMPORTED = "imported"
    ENVIRONMENT_BUILT = "environment built"
    VALIDATED = "validated"
    PLAYED = "played"


TRIAL_STAGES = tuple(TrialStage)


class Fault(StrEnum):
    """Whose doing a stop is: what a user can act on."""

    DATASET = "the dataset line"  # its fields, its patches, its commit
    REPOSITORY = "the repository's CI"  # no Linux job that runs tests, or none by name
    SOURCE = "the repo's source or mirror"  # not found, missing objects
    MACHINE = "this machine"  # a host it cannot reach
    SCOPE = "outside Arena's scope"  # a language or tool Arena does not run
    UNDECIDED = "the dataset line or Arena's leg choice"  # the verdict cannot tell which
    TIME = "the time cap"  # stopped before an answer
    ARENA = "Arena"
    NONE = "none"  # it played


# categories (the importer's reasons and `arena.tasks.report`'s), by whose fault they are; a
# category not listed is Arena's: a stop Arena cannot explain is Arena's to fix
_FAULTS: dict[str, Fault] = {
    "dataset line inconsistent": Fault.DATASET,
    "language mislabelled": Fault.DATASET,
    "gold patch changes no code": Fault.DATASET,
    "duplicate": Fault.DATASET,
    "missing language": Fault.DATASET,
    "commit not in repo": Fault.DATASET,
    "no gold patch": Fault.DATASET,
    "gold patch or tests do not apply": Fault.DATASET,
    "no test job": Fault.REPOSITORY,
    "no usable CI job": Fault.REPOSITORY,
    "tests report no result by name": Fault.REPOSITORY,
    "Windows or macOS only": Fault.REPOSITORY,
    "repo not found": Fault.SOURCE,
    "mirror incomplete": Fault.SOURCE,
    "repo host unreachable": Fault.MACHINE,
    "needs a host this machine cannot reach": Fault.MACHINE,
    "needs conda channels, unreachable from this machine": Fault.MACHINE,
    "needs more than the sandbox's limits": Fault.MACHINE,
    "needs a newer toolchain than this machine has": Fault.MACHINE,
    "needs conda": Fault.SCOPE,
    "needs Docker in the job": Fault.SCOPE,
    "needs another job's artifacts": Fault.SCOPE,
    "needs a service Arena does not run": Fault.SCOPE,
    "needs an Ubuntu PPA": Fault.SCOPE,
    "gold tests do not fail without the fix": Fault.UNDECIDED,
    "gold patch breaks passing tests": Fault.UNDECIDED,
    "time cap reached": Fault.TIME,
}
_SCOPE_PREFIXES = ("language not supported",)
_DATASET_PREFIXES = ("missing ", "bad ")


def fault_of(category: str | None) -> Fault:
    """Whose fault a stop in `category` is (None: it did not stop)."""
    if category is None:
        return Fault.NONE
    if category in _FAULTS:
        return _FAULTS[category]
    if category.startswith(_SCOPE_PREFIXES):
        return Fault.SCOPE
    if category.startswith(_DATASET_PREFIXES):
        return Fault.DATASET
    return Fault.ARENA


class TrialRecord(BaseModel):
    """One sampled line's trial."""

    model_config = ConfigDict(frozen=True)

    instance_id: str
    source_file: str
    line: int  # in its file
    rank: int  # in its file's seeded order, from 0
    seed: str
    language: str | None
    stage: TrialStage
    category: str | None  # why it stopped; None when it played
    reason: str | None
    result: str | None = None  # the match's outcome, when it played
    chosen_leg: str | None = None
    seconds: dict[str, float] = {}  # per stage attempted

    @property
    def fault(self) -> Fault:
        return fault_of(self.category)


class SampledLine(BaseModel):
    model_config = ConfigDict(frozen=True)

    source_file: str
    line: int
    rank: int
    instance_id: str
    text: str


def sample_key(seed: str, instance_id: str) -> str:
    return hashlib.sha256(f"{seed}:{instance_id}".encode()).hexdigest()


def ranked_lines(path: Path, lines: Sequence[str], seed: str) -> list[SampledLine]:
    """Every line of one file that names an instance id, in the seed's order (a line that
    names none is ranked by its own text, so it is sampled too and refused by the import)."""
    found = []
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            record: Any = load_json(text)
        except JsonRecordError:
            record = None
        named = record.get("instance_id") if isinstance(record, dict) else None
        instance_id = named if isinstance(named, str) and named.strip() else f"line-{number}"
        key = sample_key(seed, instance_id if named else text)
        found.append((key, number, instance_id, text))
    found.sort()
    return [
        SampledLine(source_file=path.name, line=n, rank=r, instance_id=i, text=t)
        for r, (_, n, i, t) in enumerate(found)
    ]


def trials_path(cache_dir: Path) -> Path:
    """Beside the library (`arena.tasks.sources.library_path`)."""
    return cache_dir / "trials.jsonl"


def read_trials(path: Path) -> list[TrialRecord]:
    return read_records(path, TrialRecord, "a trial")


def keep_trial(path: Path, record: TrialRecord) -> None:
    """Adds one trial, replacing an earlier trial of the same instance (the latest counts)."""
    kept = [r for r in read_trials(path) if r.instance_id != record.instance_id]
    write_records(path, [*kept, record])


class TrialSummary(BaseModel):
    """Counts of a set of trials: lines that reached each stage (or a later one), stops per
    category with their fault, and the median seconds of each stage."""

    lines: int
    reached: dict[str, int]
    stopped: list[tuple[str, str, str, int]]  # (category, stage, fault, count)
    median_seconds: dict[str, float]


def summarize(records: Iterable[TrialRecord]) -> TrialSummary:
    rows = list(records)
    reached = {
        stage.value: sum(1 for r in rows if TRIAL_STAGES.index(r.stage) >= n)
        for n, stage in enumerate(TRIAL_STAGES)
        if stage is not TrialStage.REFUSED
    }
    stops = Counter((r.category, r.stage.value, r.fault.value) for r in rows if r.category)
    stopped = sorted(
        ((c, s, f, n) for (c, s, f), n in stops.items() if c is not None),
        key=lambda row: (-row[3], row[0]),
    )
    times: dict[str, list[float]] = {}
    for r in rows:
        for stage, seconds in r.seconds.items():
            times.setdefault(stage, []).append(seconds)
    medians = {stage: sorted(v)[len(v) // 2] for stage, v in times.items()}
    return TrialSummary(lines=len(rows), reached=reached, stopped=stopped, median_seconds=medians)
