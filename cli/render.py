"""Readable rendering of CI results for the terminal.

Step names, test ids, logs and reasons come from tasks, models or sandboxed code: they are
shown as plain text (`Text`, `escape`, `markup=False`), never parsed as rich markup.
"""

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ci_runner import CIResult, CIStatus, StepResult, TestOutcome
from ci_runner.text import clean_text

_STATUS_STYLE = {
    CIStatus.PASSED: "bold green",
    CIStatus.FAILED: "bold red",
    CIStatus.TIMEOUT: "bold yellow",
    CIStatus.ERROR: "bold magenta",
}
_OUTCOME_STYLE = {
    TestOutcome.PASSED: "green",
    TestOutcome.FAILED: "red",
    TestOutcome.ERROR: "magenta",
    TestOutcome.SKIPPED: "dim",
}


def step_state(step: StepResult) -> str:
    if step.skipped:
        return "[dim]skipped[/]"
    if step.sandbox_died:
        return "[red]sandbox stopped[/]"
    if step.timed_out:
        return "[yellow]timeout[/]"
    if step.oom_killed:
        return "[red]out of memory[/]"
    if step.exit_code == 0:
        return "[green]ok[/]"
    if step.tripwire_exit:  # the runner's own tripwire that must fail, and nothing else
        return f"[green]ok[/] [dim](exit {step.exit_code}: the tripwire that must fail)[/]"
    return f"[red]exit {step.exit_code}[/]"


def render_ci_result(console: Console, result: CIResult, log_tail_lines: int = 20) -> None:
    steps = Table(title="Steps", title_justify="left")
    for column in ("step", "result", "time", "output"):
        steps.add_column(column)
    for step in result.steps:
        size = f"{len(step.log.encode())} B" + (" [yellow](truncated)[/]" if step.truncated else "")
        name = Text(clean_text(step.name))
        steps.add_row(name, step_state(step), f"{step.duration_s:.2f}s", size)
    console.print(steps)
    if result.tests:
        tests = Table(title=f"Tests ({len(result.tests)})", title_justify="left")
        tests.add_column("test")
        tests.add_column("outcome")
        for test_id in sorted(result.tests):
            outcome = result.tests[test_id]
            shown = Text(outcome.value, style=_OUTCOME_STYLE[outcome])
            tests.add_row(Text(clean_text(test_id)), shown)
        console.print(tests)
    broken = next((s for s in result.steps if not s.skipped and not s.succeeded), None)
    if broken is not None and broken.log.strip():
        tail = "\n".join(broken.log.rstrip().splitlines()[-log_tail_lines:])
        console.print(f"[bold]last lines of step {escape(repr(clean_text(broken.name)))}:[/]")
        console.print(clean_text(tail), markup=False, highlight=False)
    if result.tripwires:
        held = sum(1 for site in result.tripwires if site.held)
        console.print(f"tripwires: held at {held} of {len(result.tripwires)} site(s)")
    style = _STATUS_STYLE[result.status]
    console.print(f"status: [{style}]{result.status.value}[/]  ({result.duration_s:.2f}s)")
    if result.error:
        console.print(f"reason: {clean_text(result.error)}", markup=False, highlight=False)
