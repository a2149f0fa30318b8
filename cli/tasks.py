"""`arena tasks`: import task JSONL, list tasks, build their environments (and collect the
unused ones), validate them, report on the corpus."""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from arena.ci import environment_spec
from arena.tasks.importer import import_lines, read_task_lines
from arena.tasks.pipelines import with_pipeline
from arena.tasks.refusals import keep_import_outcome, read_refusals, refusals_from, refusals_path
from arena.tasks.report import STAGES, CorpusReport, Environment, LibraryTask, corpus_report
from arena.tasks.schema import Task, TaskError, Validation
from arena.tasks.sources import load_tasks, only, update_library
from arena.tasks.trials import summarize
from ci_runner import CISettings, SandboxError
from ci_runner.errors import EnvironmentBuildError
from ci_runner.git_mirrors import GitMirrors
from ci_runner.workspace import Workspaces
from cli.exits import BAD_INPUT, exit_on_errors, stderr
from cli.options import OnlyOption, TasksOption
from cli.trials import kept_trials, print_trials, trial

if TYPE_CHECKING:  # imported where used: they load the Docker client, which import and list skip
    from ci_runner.environments import EnvironmentBuilder, PlannedBuild

app = typer.Typer(no_args_is_help=True, help="Task import, listing and validation.")


@app.command("import")
def import_tasks(
    file: Annotated[
        Path | None,
        typer.Argument(help="JSONL with SwingArena or SWE-bench field names, as published"),
    ] = None,
    check: Annotated[bool, typer.Option(help="check each repo, commit and pipeline")] = True,
    language: Annotated[
        str | None,
        typer.Option(help="language of lines that have none (default: from the file name)"),
    ] = None,
    hf: Annotated[
        Path | None,
        typer.Option(
            "--hf",
            help="a local JSONL export of a SWE-bench-style Hugging Face dataset; lines "
            "without a job list take the repo's first Linux job that runs tests",
        ),
    ] = None,
    mirror: Annotated[
        list[str] | None,
        typer.Option(
            "--mirror",
            help="FROM=TO: fetch repo FROM (owner/name, or a URL prefix) from TO (a local "
            "path or Git URL; {owner} and {name} are filled in); repeatable; adds to "
            "ARENA_GIT_MIRRORS",
        ),
    ] = None,
) -> None:
    """Import tasks into the library; bad lines are reported and counted, good lines import."""
    from arena.tasks.importer import language_from_file_name, read_hf_export
    from arena.tasks.schema import TaskError, language_of

    settings = CISettings()
    with exit_on_errors():
        if (file is None) == (hf is None):
            raise TaskError("give either a FILE or --hf PATH")
        source = file if file is not None else hf
        assert source is not None
        lines = read_task_lines(source) if file is not None else read_hf_export(source)
        chosen = language_of(language) if language is not None else None
        if language is not None and chosen is None:
            raise TaskError(f"--language {language!r} is not one of python, go, rust, cpp")
        workspaces = Workspaces.from_settings(settings, GitMirrors.parse(mirror or []))
        filled = chosen or language_from_file_name(source)
        with Progress(console=stderr, transient=True) as progress:
            bar = progress.add_task(f"importing {source.name}", total=len(lines))
            report = import_lines(
                lines,
                workspaces if check else None,
                lambda n: progress.update(bar, completed=n),
                language=filled,
                any_job=hf is not None,
            )
        library = update_library(settings.cache_dir, report.tasks)
        refused = refusals_from(lines, report.errors, source.name, filled)
        keep_import_outcome(
            settings.cache_dir, refused, (t.instance_id for t in report.tasks), source.name
        )
    for error in report.errors:
        stderr.print(f"[red]{escape(str(error))}[/]", highlight=False)
    kinds = ", ".join(f"{n} {k.value}" for k, n in sorted(report.kinds().items()))
    print(
        f"imported {len(report.tasks)} task(s){f' ({kinds})' if kinds else ''}; library: {library}"
    )
    skipped = report.skipped()
    if skipped:
        reasons = ", ".join(f"{reason}: {n}" for reason, n in skipped.items())
        print(f"skipped {sum(skipped.values())} line(s): {reasons}")
    if report.errors:
        raise typer.Exit(BAD_INPUT)


def _validation_state(task: Task) -> str:
    v = task.validation
    if v is None:
        return "not validated"
    if v.fingerprint is not None and v.fingerprint != task.fingerprint():
        return "stale (task changed)"
    if v.valid:
        unguarded = ", unguarded" if v.guarded is False else ""
        return f"[green]valid[/] ({len(v.fail_to_pass)} FAIL_TO_PASS{unguarded})"
    return f"[red]invalid[/]: {escape(v.reason or '')}"


def _environment_state(task: Task, environments: EnvironmentBuilder | None) -> str:
    if task.image:
        return f"image {task.image}"
    if task.pipeline is None:
        return "pipeline not derived yet"
    if environments is None:
        return "unknown (no Docker engine)"
    state = environments.state(environment_spec(task))
    if state is None:
        return "toolchain image"
    if state.tag is None:
        return "not built"
    notes = "".join(f"\n[yellow]note[/]: {escape(n)}" for n in task.environment_notes)
    if state.built:
        return state.tag + notes
    if state.error:
        first = state.error.splitlines()[0]
        return f"[red]build failed[/]: {escape(first)}"
    return "not built"


def _environments(settings: CISettings) -> EnvironmentBuilder:
    """The environment images of the settings' sandbox provider, its engine reached now:
    SandboxError, saying how to start one, when none answers."""
    from ci_runner.environments import EnvironmentBuilder
    from ci_runner.images import ImageBuilder
    from ci_runner.providers import provider_for

    provider = provider_for(settings)
    provider.ping()
    return EnvironmentBuilder(ImageBuilder(provider, settings))


def _environments_if_reached(settings: CISettings) -> EnvironmentBuilder | None:
    """As `_environments`, or None with no engine: listings then show no image state."""
    try:
        return _environments(settings)
    except SandboxError:
        return None


@app.command("list")
def list_tasks(tasks: TasksOption = "demo") -> None:
    """List tasks: language, pipeline source, environment image and validation state."""
    settings = CISettings()
    with exit_on_errors():
        workspaces = Workspaces.from_settings(settings)
        found = load_tasks(tasks, settings.cache_dir, workspaces)
        environments = _environments_if_reached(settings)
        rows = []
        for task in found:
            source = (
                "steps"
                if task.pipeline
                else f"workflow job {', '.join(str(j) for j in task.ci_name_list)}"
            )
            try:
                derived = with_pipeline(task, workspaces)
                environment = _environment_state(derived, environments)
            except TaskError as exc:
                environment = f"[red]no pipeline[/]: {escape(str(exc))}"
            rows.append((task, source, environment))
    table = Table()
    for column in ("instance id", "language", "pipeline", "environment", "validation"):
        table.add_column(column)
    for task, source, environment in rows:
        table.add_row(
            task.instance_id, task.language.value, source, environment, _validation_state(task)
        )
    Console().print(table)


@dataclass(frozen=True)
class _Built:
    """One task's row of `build-env`: what became of its environment, and its notes."""

    task: Task
    outcome: str
    notes: tuple[str, ...]
    failed: bool
    error: str | None = None  # why it failed, as plain text


def _build_one(
    task: Task,
    environments: EnvironmentBuilder,
    workspaces: Workspaces,
    show: Callable[[str], None],
    retry: bool,
) -> _Built:
    show("deriving the pipeline")
    notes = task.environment_notes
    try:
        derived = with_pipeline(task, workspaces)
        spec = environment_spec(derived)
        if task.image or not environments.needs_build(spec):
            outcome = "toolchain image (nothing to set up or fetch)"
        else:
            notes = environments.toolchain_for(spec).notes
            outcome = environments.ensure(spec, show, retry=retry)
            record = environments.record(spec)
            if record is not None and record.packages_as_of:  # the date the task's packages are of
                notes = (*notes, f"packages resolved as of {record.packages_as_of}")
    except (EnvironmentBuildError, TaskError) as exc:
        return _Built(task, f"[red]failed[/]: {escape(str(exc))}", notes, True, str(exc))
    return _Built(task, outcome, notes, False)


def _plan(
    found: list[Task], environments: EnvironmentBuilder, workspaces: Workspaces, retry: bool
) -> list[PlannedBuild]:
    """The builds `build-env` will run (not built yet, not failed before unless `retry`)."""
    from ci_runner.environments import PlannedBuild

    planned: list[PlannedBuild] = []
    for task in found:
        if task.image:
            continue
        try:
            spec = environment_spec(with_pipeline(task, workspaces))
            state = environments.state(spec)
        except TaskError:
            continue  # the build reports it
        if state is None or state.built or (state.error and not retry):
            continue
        planned.append(PlannedBuild(spec.language, environments.missing_images(spec)))
    return planned


def _build_sequentially(
    found: list[Task], environments: EnvironmentBuilder, workspaces: Workspaces, retry: bool
) -> list[_Built]:
    built: list[_Built] = []
    with Progress(console=stderr, transient=True) as progress:
        bar = progress.add_task("environments", total=len(found))
        for task in found:
            name = task.instance_id

            def show(line: str, name: str = name) -> None:
                progress.update(bar, description=f"{name}: {line[:80]}")

            built.append(_build_one(task, environments, workspaces, show, retry))
            progress.advance(bar)
    return built


def _build_at_once(
    found: list[Task],
    environments: EnvironmentBuilder,
    workspaces: Workspaces,
    retry: bool,
    jobs: int,
) -> list[_Built]:
    """`jobs` builds at a time, each with its own line under the overall bar."""
    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with (
        Progress(*columns, console=stderr, transient=True) as progress,
        ThreadPoolExecutor(max_workers=jobs) as pool,
    ):
        bar = progress.add_task(f"environments ({jobs} at once)", total=len(found))

        def build(task: Task) -> _Built:
            name = task.instance_id
            line = progress.add_task(f"  {name}", total=None)

            def show(text: str) -> None:
                progress.update(line, description=f"  {name}: {text[:80]}")

            try:
                return _build_one(task, environments, workspaces, show, retry)
            finally:
                progress.remove_task(line)
                progress.advance(bar)

        futures = [pool.submit(build, task) for task in found]
        return [future.result() for future in futures]


@app.command("build-env")
def build_env(
    tasks: TasksOption = "demo",
    only_ids: OnlyOption = None,
    retry: Annotated[bool, typer.Option(help="rebuild environments whose build failed")] = False,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs",
            min=1,
            help="builds at once (each mostly waits on the network and the engine); "
            "above 1, a disk estimate is printed first",
        ),
    ] = 1,
    as_json: Annotated[
        bool, typer.Option("--json", help="print each task's outcome as JSON")
    ] = False,
) -> None:
    """Build each task's environment image: its setup steps, once, with network."""
    from ci_runner.environments import disk_estimate

    settings = CISettings()
    with exit_on_errors():
        workspaces = Workspaces.from_settings(settings)
        environments = _environments(settings)
        found = only(load_tasks(tasks, settings.cache_dir, workspaces), only_ids)
        if jobs == 1:
            built = _build_sequentially(found, environments, workspaces, retry)
        else:
            planned = _plan(found, environments, workspaces, retry)
            disk = environments.disk()
            for line in disk_estimate(planned, disk.images, disk.free_bytes).lines():
                stderr.print(escape(line), highlight=False)
            built = _build_at_once(found, environments, workspaces, retry, jobs)
        if tasks == "imported":  # the notes go with the task, for the website to show
            update_library(
                settings.cache_dir,
                [b.task.model_copy(update={"environment_notes": b.notes}) for b in built],
            )
    if as_json:
        rows = [
            {"task": b.task.instance_id, "failed": b.failed, "error": b.error, "notes": b.notes}
            for b in built
        ]
        print(json.dumps(rows, indent=2))
    else:
        table = Table()
        for column in ("instance id", "environment", "notes"):
            table.add_column(column)
        for b in built:
            table.add_row(b.task.instance_id, b.outcome, escape("; ".join(b.notes)))
        Console().print(table)
    if any(b.failed for b in built):
        raise typer.Exit(BAD_INPUT)


def _kept_tags(
    found: list[Task], environments: EnvironmentBuilder, workspaces: Workspaces
) -> set[str]:
    """The environment tags of `found` as runs look them up now (a task without a pipeline,
    or whose toolchain image is gone, has none a run would find)."""
    kept: set[str] = set()
    for task in found:
        if task.image:
            continue
        try:
            state = environments.state(environment_spec(with_pipeline(task, workspaces)))
        except TaskError:
            continue
        if state is not None and state.tag is not None:
            kept.add(state.tag)
    return kept


def _size(n: int) -> str:
    return f"{n / 1e9:.2f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


@app.command("gc")
def gc(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="print what would go, remove nothing")
    ] = False,
    any_cache: Annotated[
        bool,
        typer.Option(
            "--any-cache",
            help="also environment images this cache has no build record of (built with "
            "another ARENA_CACHE_DIR: tests, benchmarks, other users of a shared engine)",
        ),
    ] = False,
) -> None:
    """Remove the environment images of tasks no longer in the library (nor in the demo
    corpus) and their build records; prints what went and the space it freed."""
    settings = CISettings()
    with exit_on_errors():
        workspaces = Workspaces.from_settings(settings)
        environments = _environments(settings)
        library = load_tasks("imported", settings.cache_dir, workspaces)
        demo = load_tasks("demo", settings.cache_dir, workspaces)
        kept = _kept_tags(library + demo, environments, workspaces)
        ours = environments.recorded_tags()
        disk = environments.disk()
        unused = [i for i in disk.images if i.tag not in kept]
        chosen = [i for i in unused if any_cache or i.tag in ours]
        others = len(unused) - len(chosen)
        gone = set() if dry_run else set(environments.remove_images(i.tag for i in chosen))
        forgotten = [] if dry_run else environments.forget(kept)
    verb = "would remove" if dry_run else "removed"
    table = Table(title=f"environment images {verb}")
    for column in ("image", "language", "own size", "outcome"):
        table.add_column(column)
    freed = 0
    for image in chosen:
        if dry_run or image.tag in gone:
            freed += image.own_bytes
            outcome = "unused" if dry_run else "removed"
        else:
            outcome = "[yellow]kept[/]: a container uses it"
        table.add_row(image.tag, image.language, _size(image.own_bytes), outcome)
    if chosen:
        Console().print(table)
    print(
        f"{verb} {len(chosen) if dry_run else len(gone)} environment image(s), "
        f"{_size(freed)} freed{' if nothing else shares their layers' if dry_run else ''}; "
        f"kept {len(disk.images) - len(unused)} in use by {len(library)} library and "
        f"{len(demo)} demo task(s)"
    )
    if others:
        print(
            f"left {others} unused image(s) this cache has no build record of "
            "(--any-cache removes them)"
        )
    if forgotten:
        print(f"forgot {len(forgotten)} build record(s)")


@app.command("validate")
def validate(
    tasks: TasksOption = "demo",
    only_ids: OnlyOption = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Run each task's gold tests with and without its gold patch: FAIL_TO_PASS, PASS_TO_PASS."""
    from arena.runtime import open_runtime
    from arena.validation import ValidationIncomplete, choose_leg

    with exit_on_errors(), open_runtime(CISettings()) as runtime:
        found = only(load_tasks(tasks, runtime.settings.cache_dir, runtime.workspaces), only_ids)
        rows: list[tuple[Task, Validation | None, str]] = []
        with Progress(console=stderr, transient=True) as progress:
            bar = progress.add_task("validating", total=len(found))
            for task in found:
                progress.update(bar, description=f"validating {task.instance_id}")
                try:
                    validated = choose_leg(
                        with_pipeline(task, runtime.workspaces),
                        runtime.ci,
                        runtime.settings.max_legs_tried,
                    )
                except ValidationIncomplete as exc:  # nothing stored: it runs again next time
                    rows.append((task, None, str(exc)))
                    progress.advance(bar)
                    continue
                except TaskError as exc:  # no pipeline (e.g. a conda job): recorded, never played
                    validated = task.model_copy(
                        update={
                            "validation": Validation(
                                valid=False,
                                kind=task.kind,
                                reason=f"no pipeline: {exc}",
                                fingerprint=task.fingerprint(),
                            )
                        }
                    )
                stored, validation = validated, validated.validation
                assert validation is not None
                rows.append((stored, validation, validation.reason or ""))
                progress.advance(bar)
        if tasks == "imported":  # keep FAIL_TO_PASS, PASS_TO_PASS and the verdict with the task
            update_library(runtime.settings.cache_dir, [t for t, _, _ in rows])
    if as_json:
        print(
            json.dumps(
                [
                    {"task": t.instance_id, **v.model_dump(mode="json")}
                    if v is not None
                    else {"task": t.instance_id, "valid": None, "reason": reason}
                    for t, v, reason in rows
                ],
                indent=2,
            )
        )
        return
    table = Table()
    for column in (
        "instance id",
        "kind",
        "valid",
        "FAIL_TO_PASS",
        "PASS_TO_PASS",
        "left out",
        "reason",
    ):
        table.add_column(column)
    for task, v, reason in rows:
        if v is None:
            table.add_row(
                task.instance_id, task.kind.value, "[yellow]not yet[/]", "", "", "", reason
            )
            continue
        left_out = f"{len(v.flaky)} flaky, {len(v.broken)} broken" if v.flaky or v.broken else ""
        table.add_row(
            task.instance_id,
            v.kind.value,
            "[green]yes[/]" if v.valid else "[red]no[/]",
            str(len(v.fail_to_pass)),
            str(len(v.pass_to_pass)),
            left_out,
            reason,
        )
    Console().print(table)


def _environment_seen(task: Task, environments: EnvironmentBuilder | None) -> LibraryTask:
    """What the engine says of the task's environment, asking it nothing it would build."""
    if environments is None or task.pipeline is None or task.image:
        return LibraryTask(task)  # the report decides "none needed" from the task itself
    state = environments.state(environment_spec(task))
    if state is None:
        return LibraryTask(task, Environment.NONE_NEEDED)
    if state.tag is None:
        return LibraryTask(task, Environment.NOT_BUILT)
    if state.built:
        return LibraryTask(task, Environment.BUILT)
    if state.error:
        return LibraryTask(task, Environment.FAILED, state.error.splitlines()[0])
    return LibraryTask(task, Environment.NOT_BUILT)


def _print_report(report: CorpusReport) -> None:
    console = Console()
    table = Table(title="Instances")
    for column in ("instance", "language", "stage", "category", "chosen leg"):
        table.add_column(column)
    for row in report.rows:
        leg = escape(row.chosen_leg) if row.chosen_leg else ""
        if row.legs_considered:
            leg += f" (of {row.legs_considered} legs)"
        table.add_row(
            escape(row.instance_id),
            row.language,
            row.stage.value,
            escape(row.category or ""),
            leg,
        )
    console.print(table)
    languages = Table(title="Instances per language, by the stage they stopped at")
    languages.add_column("language")
    for stage in STAGES:
        languages.add_column(stage.value, justify="right")
    languages.add_column("total", justify="right")
    for language, counts in report.by_language.items():
        cells = [str(counts[s]) for s in STAGES]
        languages.add_row(language, *cells, str(sum(counts.values())))
    console.print(languages)
    categories = Table(title="Why instances stopped")
    for column in ("category", "stage", "count", "per language"):
        categories.add_column(column)
    for c in report.by_category:
        per = ", ".join(f"{lang} {n}" for lang, n in c.by_language.items())
        categories.add_row(escape(c.category), c.stage.value, str(c.count), per)
    console.print(categories)


@app.command("report")
def report_tasks(
    tasks: Annotated[
        str, typer.Option("--tasks", help="imported (with its refused lines), demo, or a file")
    ] = "imported",
    as_json: Annotated[bool, typer.Option("--json", help="print the report as JSON")] = False,
    csv_file: Annotated[
        Path | None, typer.Option("--csv", help="write one row per instance to this CSV file")
    ] = None,
) -> None:
    """Each instance's stage (refused, imported, environment built, validated, playable) and
    why it stopped; counts per language and per reason category."""
    from arena.tasks.report import csv_text

    settings = CISettings()
    with exit_on_errors():
        if as_json and csv_file is not None:
            raise TaskError("give --json or --csv FILE, not both")
        workspaces = Workspaces.from_settings(settings)
        found = load_tasks(tasks, settings.cache_dir, workspaces)
        refused = read_refusals(refusals_path(settings.cache_dir)) if tasks == "imported" else []
        environments = _environments_if_reached(settings)
        report = corpus_report(refused, [_environment_seen(t, environments) for t in found])
    trials = kept_trials(settings.cache_dir) if tasks == "imported" else []
    if csv_file is not None:
        csv_file.write_text(csv_text(report.rows))
        print(f"wrote {len(report.rows)} row(s) to {csv_file}")
    elif as_json:
        from api.schemas.tasks import CorpusReportOut

        body = CorpusReportOut.of(report).model_dump(mode="json")
        if trials:
            body["trials"] = {
                "lines": [t.model_dump(mode="json") | {"fault": t.fault.value} for t in trials],
                "summary": summarize(trials).model_dump(mode="json"),
            }
        print(json.dumps(body, indent=2))
    else:
        _print_report(report)
        if trials:
            print_trials(trials)


app.command("trial")(trial)
