"""Wall time of `arena ci run` against a bare `docker run` of the same commands.

For one demo task per language: the same image, the same checkout with the same diffs
applied, the same steps. The baseline gets its checkout ready-made (copied outside the
timing) and runs every step in one `docker run --rm --network none`; `arena ci run`
pays for everything: start-up, mirror, checkout, diffs, sandbox (with its workspace
copied in through the engine and the report copied out), report. Prints the median of
several runs of each and their ratio (target: at most 1.25x). A third column times
`CIRunner.run` in a warm process as a worker runs it (build_ci: the next run's sandbox is
started ahead and a used one removed after its result is known), without the CLI's
start-up (target: geometric mean at most 1.10x); a fourth, the same runner starting and
removing a fresh sandbox on each run's critical path, shows what the spares save. A last
baseline gives the bare `docker run` the CPU limit and weight a sandbox gets (`ARENA_LIMITS`
`cpus`, at most the host's CPUs): under a limit below the host's CPUs, that limit, not the
runner, is what slows the compiling languages, and the warm runner against it is the
runner's own cost.

`arena` starts from bytecode, as an installed command does (pip compiles site-packages when it
installs): PYTHONDONTWRITEBYTECODE is dropped from its environment, so the warm-up run caches
what an editable checkout's sources compile to. With it set (as on CI's machines), every run
compiled Arena's own modules again, ~0.1 s of CPU that is no part of what `arena` costs.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from arena.tasks import Task
from arena.tasks.demo import demo_tasks
from arena.tasks.pipelines import with_pipeline
from ci_runner import CIRequest, CIRunner, CISettings, CIStatus
from ci_runner.images import ImageBuilder
from ci_runner.patches import apply_diffs
from ci_runner.providers.docker.engine import connect
from ci_runner.providers.docker.provider import DockerProvider
from ci_runner.providers.docker.sandbox import (
    SANDBOX_CPU_SHARES,
    engine_cpus,
    sandbox_cpus,
    sandbox_uid,
)
from ci_runner.workspace import Workspaces

ARENA = str(Path(sys.executable).parent / "arena")


def baseline_script(task: Task) -> str:
    """The pipeline's steps as one bash script, each in its workdir with its env."""
    lines = ["set -eo pipefail"]
    pipeline = task.require_pipeline()
    for key, value in pipeline.env.items():
        lines.append(f"export {key}={shlex.quote(value)}")
    for step in pipeline.steps:
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in step.env.items())
        run = shlex.quote(step.run)
        command = f"cd /workspace/{step.workdir} && {exports} bash -eo pipefail -c {run}"
        lines.append(f"( {command} ) || true" if step.continue_on_error else f"( {command} )")
    return "\n".join(lines)


def hand_to_uid(root: Path, uid: int) -> None:
    """Let the container's user write the bind-mounted checkout (no-op unless we are root)."""
    if os.geteuid() != 0:
        return
    os.lchown(root, uid, uid)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            os.lchown(os.path.join(dirpath, name), uid, uid)


def time_baseline(
    task: Task, image: str, prepared: Path, scratch: Path, cpus: float | None = None
) -> float:
    """`cpus`: the CPU limit a sandbox gets, and its CPU weight (else neither, as a bare
    `docker run` has)."""
    run_dir = scratch / "baseline"
    shutil.rmtree(run_dir, ignore_errors=True)
    shutil.copytree(prepared, run_dir, symlinks=True)
    hand_to_uid(run_dir, sandbox_uid())
    uid = sandbox_uid()
    started = time.perf_counter()
    subprocess.run(
        [
            "docker",
            "run",
            "--rm",
            "--network",
            "none",
            *(["--cpus", str(cpus), "--cpu-shares", str(SANDBOX_CPU_SHARES)] if cpus else []),
            "--user",
            f"{uid}:{uid}",
            "-e",
            "HOME=/tmp",
            "-v",
            f"{run_dir}:/workspace",
            "-w",
            "/workspace",
            image,
            "bash",
            "-c",
            baseline_script(task),
        ],
        capture_output=True,
        check=False,
    )
    return time.perf_counter() - started


def time_arena(task_file: Path, diff_files: list[Path], env: dict[str, str]) -> float:
    args = [ARENA, "ci", "run", "--task", str(task_file), "--json"]
    for diff in diff_files:
        args += ["--diff", str(diff)]
    started = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"arena ci run failed ({done.returncode}): {done.stderr}")
    if json.loads(done.stdout)["status"] != "passed":
        raise SystemExit(f"{task_file}: expected a passing run, got {done.stdout[:2000]}")
    return elapsed


def time_warm(runner: CIRunner, request: CIRequest) -> float:
    started = time.perf_counter()
    result = runner.run(request)
    elapsed = time.perf_counter() - started
    if result.status is not CIStatus.PASSED:
        raise SystemExit(f"expected a passing run, got {result.status}: {result.error}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs of each (after a warm-up)")
    args = parser.parse_args()
    console = Console()
    scratch = Path(tempfile.mkdtemp(prefix="arena-bench-"))
    settings = CISettings(cache_dir=scratch / "cache")
    env = {**os.environ, "ARENA_CACHE_DIR": str(settings.cache_dir)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # see the module's docstring
    client = connect()
    builder = ImageBuilder(DockerProvider(settings, client), settings)
    # a sandbox's CPU limit and weight: were the limit below the host's CPUs, compiling Go
    # and Rust would be slower under it, which is the limit's cost, not the runner's
    sandbox_limit = sandbox_cpus(settings.limits, engine_cpus(client))
    warm_runner = CIRunner(
        settings, DockerProvider(settings, client), spares=True
    )  # as build_ci makes it for workers
    fresh_runner = CIRunner(settings, DockerProvider(settings, client))
    workspaces = Workspaces.from_settings(settings)
    tasks = [with_pipeline(t, workspaces) for t in demo_tasks(settings.cache_dir / "demo-repos")]
    chosen = {t.language: t for t in reversed(tasks)}  # the first task of each language
    table = Table(title=f"arena ci run vs bare docker run (median of {args.runs})")
    for column in (
        "language",
        "task",
        "docker run",
        "arena ci run",
        "ratio",
        "warm runner",
        "ratio",
        "no spares",
        "ratio",
        f"docker run --cpus {sandbox_limit:g}",
        "warm ratio",
    ):
        table.add_column(column)
    ratios, warm_ratios, fresh_ratios, limited_ratios = [], [], [], []
    try:
        with Progress(console=console, transient=True) as progress:
            bar = progress.add_task("benchmark", total=len(chosen) * (args.runs + 1) * 5)
            for language, task in sorted(chosen.items()):
                image = builder.ensure(language.value)
                task_file = scratch / f"{task.instance_id}.json"
                task_file.write_text(task.model_copy(update={"image": image}).model_dump_json())
                diffs = [scratch / f"{task.instance_id}.{n}.diff" for n in ("gold", "tests")]
                diffs[0].write_text(task.patch)
                diffs[1].write_text(task.test_patch)
                prepared, repo = workspaces.checkout(task.repo, task.base_commit)
                apply_diffs(prepared, repo, (task.patch, task.test_patch))
                arena_times, docker_times, warm_times, fresh_times = [], [], [], []
                limited_times = []
                request = CIRequest(
                    repo=task.repo,
                    commit=task.base_commit,
                    pipeline=task.require_pipeline(),
                    image=image,
                    diffs=(task.patch, task.test_patch),
                )
                for attempt in range(args.runs + 1):  # the first of each is a warm-up
                    progress.update(bar, description=f"{language}: run {attempt}")
                    docker_time = time_baseline(task, image, prepared, scratch)
                    progress.advance(bar)
                    limited_time = time_baseline(task, image, prepared, scratch, sandbox_limit)
                    progress.advance(bar)
                    arena_time = time_arena(task_file, diffs, env)
                    progress.advance(bar)
                    warm_time = time_warm(warm_runner, request)
                    progress.advance(bar)
                    fresh_time = time_warm(fresh_runner, request)
                    progress.advance(bar)
                    if attempt:
                        docker_times.append(docker_time)
                        arena_times.append(arena_time)
                        warm_times.append(warm_time)
                        fresh_times.append(fresh_time)
                        limited_times.append(limited_time)
                base, ours = statistics.median(docker_times), statistics.median(arena_times)
                warm = statistics.median(warm_times)
                fresh = statistics.median(fresh_times)
                limited = statistics.median(limited_times)
                limited_ratios.append(warm / limited)
                ratios.append(ours / base)
                warm_ratios.append(warm / base)
                fresh_ratios.append(fresh / base)
                table.add_row(
                    language.value,
                    task.instance_id.removeprefix("demo__"),
                    f"{base:.2f}s",
                    f"{ours:.2f}s",
                    f"{ours / base:.2f}x",
                    f"{warm:.2f}s",
                    f"{warm / base:.2f}x",
                    f"{fresh:.2f}s",
                    f"{fresh / base:.2f}x",
                    f"{limited:.2f}s",
                    f"{warm / limited:.2f}x",
                )
    finally:
        warm_runner.close()
        shutil.rmtree(scratch, ignore_errors=True)
    console.print(table)
    worst = max(ratios)
    verdict = "[green]within[/]" if worst <= 1.25 else "[red]over[/]"
    console.print(
        f"arena ci run: worst ratio {worst:.2f}x, geometric mean "
        f"{statistics.geometric_mean(ratios):.2f}x: {verdict} the 1.25x target"
    )
    warm_mean = statistics.geometric_mean(warm_ratios)
    warm_verdict = "[green]within[/]" if warm_mean <= 1.10 else "[red]over[/]"
    console.print(
        f"warm runner (no CLI start-up): worst ratio {max(warm_ratios):.2f}x, geometric mean "
        f"{warm_mean:.2f}x: {warm_verdict} the 1.10x target"
    )
    console.print(
        f"warm runner against a bare docker run under the sandbox's CPU limit ({sandbox_limit:g}"
        f" CPUs): the runner's own cost, geometric mean "
        f"{statistics.geometric_mean(limited_ratios):.2f}x"
    )
    console.print(
        f"without spares (a fresh sandbox started and removed on each run's critical path): "
        f"geometric mean {statistics.geometric_mean(fresh_ratios):.2f}x"
    )


if __name__ == "__main__":
    main()
