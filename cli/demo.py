"""`arena demo`: the main job on a fresh machine, a CI run of a bundled task."""

from typing import Annotated

import typer
from rich.console import Console

from cli.ci import run_task_ci
from cli.exits import BAD_INPUT, exit_on_errors, fail
from cli.render import render_ci_result


def demo(
    task: Annotated[str | None, typer.Option("--task", help="instance id of a demo task")] = None,
) -> None:
    """Run a bundled task's CI twice: with its gold tests only, then with the gold fix too."""
    from arena.tasks.demo import demo_tasks  # git and the settings: only when a demo runs
    from ci_runner import CISettings

    console = Console()
    settings = CISettings()
    with exit_on_errors():
        tasks = demo_tasks(settings.cache_dir / "demo-repos")
        chosen = next((t for t in tasks if task in (None, t.instance_id)), None)
        if chosen is None:
            fail(
                BAD_INPUT,
                f"no demo task {task!r}; known: {', '.join(t.instance_id for t in tasks)}",
            )
        console.rule(f"{chosen.instance_id}: base + gold tests (the bug shows)")
        render_ci_result(console, run_task_ci(chosen, (chosen.test_patch,), settings))
        console.rule(f"{chosen.instance_id}: base + gold fix + gold tests")
        render_ci_result(console, run_task_ci(chosen, (chosen.patch, chosen.test_patch), settings))
