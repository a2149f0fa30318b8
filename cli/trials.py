"""`arena tasks trial`: a seeded random sample of dataset lines through every stage, one line at
a time within a time cap, as a user's own lines go (see `arena.tasks.trials`).

Each stage is the `arena` command a user would type, run as a child process: a stage that
outlives the line's cap is stopped with its whole process group, and `arena ci sweep` removes
whatever sandbox it left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from arena.engine_status import engine_check
from arena.tasks.importer import import_jsonl, read_task_lines
from arena.tasks.refusals import read_refusals, refusals_path
from arena.tasks.report import categorize
from arena.tasks.schema import Task, TaskError, repo_source
from arena.tasks.sources import library_path
from arena.tasks.trials import (
    SampledLine,
    TrialRecord,
    TrialStage,
    TrialSummary,
    keep_trial,
    ranked_lines,
    read_trials,
    summarize,
    trials_path,
)
from ci_runner import CISettings
from ci_runner.errors import SandboxError, WorkspaceError
from ci_runner.git_mirrors import GitMirrors
from ci_runner.workspace import Workspaces
from cli.exits import exit_on_errors, stderr

TIME_CAP = "time cap reached"
# a line whose repo cannot be reached is replaced by the next one with --skip-unreachable
_UNREACHABLE = ("repo host unreachable", "repo not found")
_ARENA = [sys.executable, "-c", "from cli import main; main()"]


class _TimedOut(Exception):
    pass


@dataclass
class _Line:
    """One sampled line's trial as it goes."""

    sampled: SampledLine
    deadline: float
    seconds: dict[str, float] = field(default_factory=dict)

    def run(self, stage: str, *args: str) -> subprocess.CompletedProcess[str]:
        """One `arena` command, within what is left of the line's cap."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise _TimedOut(stage)
        started = time.monotonic()
        child = subprocess.Popen(
            [*_ARENA, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own group: stopped whole at the cap
        )
        try:
            out, err = child.communicate(timeout=left)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            subprocess.run([*_ARENA, "ci", "sweep"], capture_output=True, check=False)
            raise _TimedOut(stage) from None
        finally:
            self.seconds[stage] = round(time.monotonic() - started, 1)
        return subprocess.CompletedProcess(child.args, child.returncode, out, err)


def _tail(done: subprocess.CompletedProcess[str]) -> str:
    return (done.stderr.strip() or done.stdout.strip())[-800:] or f"exit {done.returncode}"


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def _library_task(cache_dir: Path, instance_id: str) -> Task | None:
    """The task as the import left it in the library (`arena tasks import` wrote it)."""
    library = library_path(cache_dir)
    tasks = import_jsonl(library, None).tasks if library.exists() else []
    return next((t for t in tasks if t.instance_id == instance_id), None)


def _trial(
    line: _Line, cache_dir: Path, mirrors: list[str], workdir: Path, seed: str
) -> TrialRecord:
    sampled = line.sampled
    stage = TrialStage.REFUSED
    category: str | None = None
    reason: str | None = None
    result: str | None = None
    language: str | None = None
    chosen: str | None = None
    try:
        single = workdir / sampled.source_file  # its file's name gives lines their language
        single.write_text(sampled.text + "\n")
        imported = line.run("import", "tasks", "import", str(single), *_mirror_args(mirrors))
        task = _library_task(cache_dir, sampled.instance_id) if imported.returncode == 0 else None
        if task is None:
            refusal = _refusal(cache_dir, sampled)
            category = categorize(refusal[0]) if refusal else "import failed"
            reason = refusal[1] if refusal else _tail(imported)
        else:
            stage, language, chosen = TrialStage.IMPORTED, task.language.value, task.ci_job
            # every later stage needs the engine: without one the trial stops (and resumes)
            # rather than blame each line's environment for the machine
            if (down := engine_check(CISettings())["reason"]) is not None:
                raise SandboxError(str(down))
            only = ("--tasks", "imported", "--only", sampled.instance_id)
            built = line.run("environment", "tasks", "build-env", *only, "--json")
            if built.returncode != 0:
                outcomes = _json(built.stdout)
                error = (
                    outcomes[0].get("error") if isinstance(outcomes, list) and outcomes else None
                )
                reason = str(error) if error else _tail(built)
                category = categorize(f"environment build failed: {reason}", validation=True)
            else:
                stage = TrialStage.ENVIRONMENT_BUILT
                checked = line.run("validation", "tasks", "validate", *only, "--json")
                verdicts = _json(checked.stdout)
                verdict = verdicts[0] if isinstance(verdicts, list) and verdicts else None
                if not isinstance(verdict, dict) or not verdict.get("valid"):
                    reason = str(verdict.get("reason")) if verdict else _tail(checked)
                    category = categorize(reason, validation=True)
                else:
                    stage = TrialStage.VALIDATED
                    played = line.run(
                        "match", "play", "--task", sampled.instance_id, "--a", "oracle",
                        "--b", "null", "--tasks", "imported", "--json",
                    )  # fmt: skip
                    match = _json(played.stdout)
                    if not isinstance(match, dict):
                        reason, category = _tail(played), "match failed"
                    else:
                        stage = TrialStage.PLAYED
                        result = f"{match.get('result')} {match.get('score')}"
                        if match.get("result") != "oracle":
                            category, reason = "oracle did not beat null", result
    except _TimedOut as exc:
        category, reason = TIME_CAP, f"the line's time cap ended during its {exc}"
    return TrialRecord(
        instance_id=sampled.instance_id,
        source_file=sampled.source_file,
        line=sampled.line,
        rank=sampled.rank,
        seed=seed,
        language=language,
        stage=stage,
        category=category,
        reason=reason,
        result=result,
        chosen_leg=chosen,
        seconds=line.seconds,
    )


def _unreachable(sampled: SampledLine, workspaces: Workspaces) -> str | None:
    """Why the line's repo cannot be fetched (its commit, as the import would fetch it into
    the same cache), or None: a line refused before its import fetches anything is skipped
    too when its repo is out of reach, so the sample is the same whatever the refusal."""
    record = _json(sampled.text)
    repo = record.get("repo") if isinstance(record, dict) else None
    commit = record.get("base_commit") if isinstance(record, dict) else None
    if not isinstance(repo, str) or not isinstance(commit, str) or not repo.strip():
        return None  # the import refuses it, and says why
    try:
        workspaces.mirror(repo_source(repo.strip()), commit.strip().lower())
    except WorkspaceError as exc:
        return exc.reason if exc.reason in _UNREACHABLE else None
    return None


def _mirror_args(mirrors: list[str]) -> list[str]:
    return [arg for rule in mirrors for arg in ("--mirror", rule)]


def _refusal(cache_dir: Path, sampled: SampledLine) -> tuple[str, str] | None:
    for refusal in read_refusals(refusals_path(cache_dir)):
        if refusal.instance_id == sampled.instance_id:
            return refusal.reason, refusal.text
    return None


def trial(
    files: Annotated[list[Path], typer.Argument(help="dataset files (JSONL), as published")],
    count: Annotated[int, typer.Option(help="lines per file", min=1)] = 15,
    seed: Annotated[
        str, typer.Option(help="the sample's seed (lines ranked by sha256(seed:id))")
    ] = "0",
    cap: Annotated[float, typer.Option(help="seconds per line, all stages together", min=1)] = 1800,
    skip_unreachable: Annotated[
        bool,
        typer.Option(help="replace a line whose repo cannot be fetched by the next one"),
    ] = False,
    mirror: Annotated[
        list[str] | None,
        typer.Option("--mirror", help="FROM=TO, as for `arena tasks import`; repeatable"),
    ] = None,
    resume: Annotated[
        bool,
        typer.Option(
            help="keep the lines this seed already tried (in trials.jsonl) and go on from there"
        ),
    ] = False,
    retry_capped: Annotated[
        bool,
        typer.Option(
            help="with --resume, try again the lines the time cap stopped (give a larger --cap)"
        ),
    ] = False,
) -> None:
    """Run a seeded random sample of each file's lines through import, environment build,
    validation and a match of oracle against null, one line at a time; print and keep (in the
    library's trials.jsonl, shown by `arena tasks report`) per stage and category counts,
    whose fault each stop is, and the time each stage took.

    A trial stopped in the middle (Ctrl-C, a reboot, no Docker engine answering when a line
    needs one) goes on with `--resume`: a line already tried with the same seed is counted as
    it was kept, never run again, except, with `--retry-capped`, one the cap stopped (what it
    built and validated is kept, so a larger cap takes it on from there)."""
    settings = CISettings()
    cache_dir = settings.cache_dir
    records: list[TrialRecord] = []
    with exit_on_errors():
        done = _tried(cache_dir, seed) if resume else {}
        samples = [(p, ranked_lines(p, read_task_lines(p), seed)) for p in files]
        workspaces = Workspaces.from_settings(settings, GitMirrors.parse(mirror or []))
        workspaces = workspaces.with_fetch_timeout(cap)  # a probe within a line's cap
        total = sum(min(count, len(ranked)) for _, ranked in samples)
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
        with (
            tempfile.TemporaryDirectory(prefix="arena-trial-") as workdir,
            Progress(*columns, TimeElapsedColumn(), console=stderr) as progress,
        ):
            bar = progress.add_task("trial", total=total)
            for path, ranked in samples:
                taken = 0
                for sampled in ranked:
                    if taken == count:
                        break
                    progress.update(bar, description=f"{path.name}: {sampled.instance_id}")
                    kept = done.get((sampled.source_file, sampled.instance_id))
                    if kept is not None and retry_capped and kept.category == TIME_CAP:
                        kept = None
                    if kept is not None:
                        taken += 1
                        records.append(kept)
                        progress.advance(bar)
                        continue
                    if skip_unreachable and (why := _unreachable(sampled, workspaces)):
                        stderr.print(f"skipped {sampled.instance_id}: {why}")
                        continue
                    line = _Line(sampled, time.monotonic() + cap)
                    record = _trial(line, cache_dir, mirror or [], Path(workdir), seed)
                    if skip_unreachable and record.category in _UNREACHABLE:
                        stderr.print(f"skipped {sampled.instance_id}: {record.category}")
                        continue
                    taken += 1
                    keep_trial(trials_path(cache_dir), record)
                    records.append(record)
                    progress.advance(bar)
                    stderr.print(
                        f"{escape(record.instance_id)}: {record.stage.value}"
                        + (
                            f" ({escape(record.category)}: {record.fault.value})"
                            if record.category
                            else ""
                        )
                    )
    print_trials(records)
    print(f"kept in {trials_path(cache_dir)}")


def print_trials(records: list[TrialRecord]) -> None:
    """Each line's trial, then the counts (`summarize`)."""
    console = Console()
    lines = Table(title="Sampled lines")
    for column in ("instance", "file", "rank", "stage", "category", "fault", "seconds"):
        lines.add_column(column)
    for r in records:
        seconds = ", ".join(f"{k} {v:.0f}" for k, v in r.seconds.items())
        lines.add_row(
            escape(r.instance_id), r.source_file, str(r.rank), r.stage.value,
            escape(r.category or r.result or ""), r.fault.value, seconds,
        )  # fmt: skip
    console.print(lines)
    _print_summary(console, summarize(records))


def _print_summary(console: Console, summary: TrialSummary) -> None:
    stages = Table(title=f"Stages reached ({summary.lines} lines)")
    for column in ("stage", "lines", "median seconds"):
        stages.add_column(column)
    timed = {
        "imported": "import",
        "environment built": "environment",
        "validated": "validation",
        "played": "match",
    }
    for stage, n in summary.reached.items():
        seconds = summary.median_seconds.get(timed[stage])
        stages.add_row(stage, str(n), "" if seconds is None else f"{seconds:.0f}")
    console.print(stages)
    stops = Table(title="Why lines stopped")
    for column in ("category", "stage", "whose fault", "lines"):
        stops.add_column(column)
    for category, stage, fault, n in summary.stopped:
        stops.add_row(escape(category), stage, fault, str(n))
    console.print(stops)


def _tried(cache_dir: Path, seed: str) -> dict[tuple[str, str], TrialRecord]:
    """The kept trials of this seed, by file and instance: what `--resume` does not run again."""
    kept = read_trials(trials_path(cache_dir))
    return {(r.source_file, r.instance_id): r for r in kept if r.seed == seed}


def kept_trials(cache_dir: Path) -> list[TrialRecord]:
    try:
        return read_trials(trials_path(cache_dir))
    except TaskError as exc:
        stderr.print(f"[yellow]{escape(str(exc))}[/]")
        return []
