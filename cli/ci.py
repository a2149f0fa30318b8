"""`arena ci`: run a task's pipeline in the sandbox, build the CI images, sweep orphans.

Each command imports what it uses when it runs: the runner, the Docker client and the
settings machinery; tasks (their schema brings the workflow readers) for `run` alone; the
tables for `run` without `--json` alone. `arena ci run` is timed against a bare `docker run`
(bench/ci_overhead.py), and `./dev setup` starts `arena ci images` and `arena ci sweep`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from ci_runner.diff_text import MAX_DIFF_BYTES
from ci_runner.languages import LANGUAGES
from cli.exits import BAD_INPUT, exit_on_errors, fail, stderr

if TYPE_CHECKING:
    from rich.status import Status

    from arena.tasks import Task
    from ci_runner import CIResult, CISettings, StepResult

app = typer.Typer(no_args_is_help=True, help="Sandboxed CI runs.")


def read_diff(path: Path) -> str:
    """The diff file's text; one over the size limit is refused before it is read."""
    try:
        size = path.stat().st_size
        if size > MAX_DIFF_BYTES:
            limit = MAX_DIFF_BYTES // (1024 * 1024)
            fail(
                BAD_INPUT,
                f"diff file {path} is {size / (1024 * 1024):.1f} MiB, over the {limit} MiB limit",
            )
        return path.read_text()
    except FileNotFoundError:
        fail(BAD_INPUT, f"diff file {path} does not exist")
    except (OSError, UnicodeDecodeError) as exc:
        fail(BAD_INPUT, f"cannot read diff file {path}: {exc}")


def run_task_ci(task: Task, diffs: tuple[str, ...], settings: CISettings) -> CIResult:
    """Run the task's pipeline on its base commit plus `diffs`, with live status on stderr."""
    from arena.ci import environment_spec
    from arena.tasks.pipelines import with_pipeline
    from ci_runner import CIRequest, CIRunner
    from ci_runner.environments import EnvironmentBuilder
    from ci_runner.images import ImageBuilder
    from ci_runner.workspace import Workspaces

    runner = CIRunner(settings)
    task = with_pipeline(task, Workspaces.from_settings(settings))
    pipeline = task.require_pipeline()
    with stderr.status("preparing the CI image") as status:
        image = task.image or EnvironmentBuilder(ImageBuilder(runner.provider, settings)).image_for(
            environment_spec(task),
            progress=lambda line: status.update(f"image: {escape(line[:100])}"),
        )
        names = [step.name for step in pipeline.steps]
        status.update(escape(f"checking out {task.instance_id} and running step {names[0]!r}"))

        def on_step(done: StepResult) -> None:
            index = names.index(done.name)
            if index + 1 < len(names):
                step = escape(repr(names[index + 1]))
                status.update(f"running step {step} ({index + 2}/{len(names)})")

        request = CIRequest(
            repo=task.repo,
            commit=task.base_commit,
            pipeline=pipeline,
            image=image,
            diffs=diffs,
        )
        return runner.run(request, on_step=on_step)


@app.command("run")
def run(
    task: Annotated[Path, typer.Option("--task", help="task JSON file")],
    diff: Annotated[
        list[Path] | None, typer.Option("--diff", help="unified diff to apply; repeat for several")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the CIResult as JSON")] = False,
) -> None:
    """Apply the diffs in order to the task's base commit and run its pipeline."""
    from arena.tasks import load_task_file
    from ci_runner import CISettings

    with exit_on_errors():
        loaded = load_task_file(task)
        diffs = tuple(read_diff(p) for p in diff or [])
        result = run_task_ci(loaded, diffs, CISettings())
    if as_json:
        print(result.model_dump_json(indent=2))
    else:
        from rich.console import Console

        from cli.render import render_ci_result

        render_ci_result(Console(), result)
        for note in result.fuzz:
            stderr.print(f"[yellow]applied inexactly:[/] {escape(note)}", highlight=False)
    if result.patch_error is not None:
        if not as_json:
            stderr.print(f"[bold red]error:[/] {escape(result.patch_error)}", highlight=False)
        raise typer.Exit(BAD_INPUT)


@app.command("images")
def images(
    language: Annotated[
        list[str] | None, typer.Option("--language", help=f"one of {', '.join(LANGUAGES)}")
    ] = None,
) -> None:
    """Build (or find cached) the CI image of each language."""
    from ci_runner import CIRunner, CISettings
    from ci_runner.images import ImageBuilder

    with exit_on_errors():
        settings = CISettings()
        builder = ImageBuilder(CIRunner(settings).provider, settings)
        for name in language or list(LANGUAGES):
            with stderr.status(f"{name}: checking image") as status:

                def show(line: str, name: str = name, status: Status = status) -> None:
                    status.update(escape(f"{name}: {line[:100]}"))

                tag = builder.ensure(name, progress=show)
            print(f"{name}\t{tag}")


@app.command("sweep")
def sweep(
    older_than: Annotated[
        float | None,
        typer.Option(help="also remove any sandbox or run directory older than this many seconds"),
    ] = None,
) -> None:
    """Remove sandbox containers and run directories left behind by runs that died."""
    from ci_runner import CISettings
    from ci_runner.providers import provider_for
    from ci_runner.workspace import sweep_run_dirs

    with exit_on_errors():
        settings = CISettings()
        removed = provider_for(settings).sweep(older_than)
        dirs = sweep_run_dirs(settings.runs_dir, max_age_s=older_than)
    print(f"removed {len(removed)} container(s)" + (": " + ", ".join(removed) if removed else ""))
    print(
        f"removed {len(dirs)} run directory(ies)"
        + (": " + ", ".join(d.name for d in dirs) if dirs else "")
    )
