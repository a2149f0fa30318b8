"""`arena tasks`: import task JSONL, list tasks, validate them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from arena.cli.exits import BAD_INPUT, exit_on_errors, stderr
from arena.cli.options import TasksOption
from arena.tasks.importer import import_lines, read_task_lines, write_jsonl
from arena.tasks.schema import Task, Validation
from arena.tasks.sources import library_path, load_tasks
from ci_runner import CISettings
from ci_runner.workspace import Workspaces

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
        workspaces = Workspaces(settings.mirrors_dir, settings.runs_dir)
        with Progress(console=stderr, transient=True) as progress:
            bar = progress.add_task(f"importing {source.name}", total=len(lines))
            report = import_lines(
                lines,
                workspaces if check else None,
                lambda n: progress.update(bar, completed=n),
                language=chosen or language_from_file_name(source),
                any_job=hf is not None,
            )
        library = library_path(settings.cache_dir)
        existing = load_tasks("imported", settings.cache_dir, workspaces)
        merged = {t.instance_id: t for t in existing} | {t.instance_id: t for t in report.tasks}
        write_jsonl(library, merged.values())
    for error in report.errors:
        stderr.print(f"[red]{error}[/]", highlight=False)
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


@app.command("list")
def list_tasks(tasks: TasksOption = "demo") -> None:
    """List tasks with their language and pipeline source."""
    settings = CISettings()
    with exit_on_errors():
        found = load_tasks(
            tasks, settings.cache_dir, Workspaces(settings.mirrors_dir, settings.runs_dir)
        )
    table = Table()
    for column in ("instance id", "language", "pipeline", "created"):
        table.add_column(column)
    for task in found:
        source = (
            "steps"
            if task.pipeline
            else f"workflow job {', '.join(str(j) for j in task.ci_name_list)}"
        )
        table.add_row(task.instance_id, task.language.value, source, task.created_at or "")
    Console().print(table)


@app.command("validate")
def validate(
    tasks: TasksOption = "demo",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Run each task's gold tests with and without its gold patch: FAIL_TO_PASS, PASS_TO_PASS."""
    from arena.runtime import build_runtime
    from arena.tasks.pipelines import with_pipeline
    from arena.tasks.validation import ValidationIncomplete, validate_task

    with exit_on_errors():
        runtime = build_runtime(CISettings())
        found = load_tasks(tasks, runtime.settings.cache_dir, runtime.workspaces)
        rows: list[tuple[Task, Validation | None, str]] = []
        with Progress(console=stderr, transient=True) as progress:
            bar = progress.add_task("validating", total=len(found))
            for task in found:
                progress.update(bar, description=f"validating {task.instance_id}")
                try:
                    validation = validate_task(with_pipeline(task, runtime.workspaces), runtime.ci)
                except ValidationIncomplete as exc:  # nothing stored: it runs again next time
                    rows.append((task, None, str(exc)))
                else:
                    stored = task.model_copy(update={"validation": validation})
                    rows.append((stored, validation, validation.reason or ""))
                progress.advance(bar)
        if tasks == "imported":  # keep FAIL_TO_PASS, PASS_TO_PASS and the verdict with the task
            write_jsonl(library_path(runtime.settings.cache_dir), [t for t, _, _ in rows])
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
