"""Environment images: their CI-run overhead, and what a warm build cache saves.

(1) For a task with an environment image (setup pip-installs a PyPI package), a CI run of
its validation once the image exists, by `CIRunner.run` in a warm process, against a bare
`docker run --network none` of the same steps from the same image (target: at most 1.2x).
(2) On a cargo workspace of several crates, a CI run after a patch to one crate from the
environment image (target dir warmed at the base commit) against the same run from the
bare toolchain image, where everything compiles (target: at most 0.3x).
Prints the median of several runs of each.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the test projects, uninstalled

from rich.console import Console
from rich.table import Table

from arena.tasks.gitrepo import commit_directory
from bench.ci_overhead import hand_to_uid
from ci_runner import CIRequest, CIRunner, CISettings, CIStatus, Pipeline
from ci_runner.engine import connect
from ci_runner.environments import EnvironmentBuilder, EnvironmentSpec
from ci_runner.images import ImageBuilder
from ci_runner.sandbox.docker import sandbox_uid
from ci_runner.workspace import Workspaces
from tests.ci_runner.env_projects import (
    PYTHON_FILES,
    RUST_PIPELINE,
    python_pipeline,
    rust_files,
    rust_patch,
)

HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")


def _repo(files: dict[str, str], scratch: Path, name: str) -> tuple[str, str]:
    source = scratch / f"{name}-src"
    for relative, text in files.items():
        path = source / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    repo = scratch / f"{name}.git"
    return str(repo), commit_directory(source, repo)


def _script(pipeline: Pipeline) -> str:
    lines = ["set -eo pipefail"]
    lines += [f"export {k}={shlex.quote(v)}" for k, v in pipeline.env.items()]
    for step in pipeline.steps:
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in step.env.items())
        run = shlex.quote(step.run)
        command = f"cd /workspace/{step.workdir} && {exports} bash -eo pipefail -c {run}"
        lines.append(f"( {command} )")
    return "\n".join(lines)


def time_bare(image: str, pipeline: Pipeline, prepared: Path, scratch: Path) -> float:
    run_dir = scratch / "bare"
    shutil.rmtree(run_dir, ignore_errors=True)
    shutil.copytree(prepared, run_dir, symlinks=True)
    uid = sandbox_uid()
    hand_to_uid(run_dir, uid)
    started = time.perf_counter()
    done = subprocess.run(
        [
            "docker",
            "run",
            "--rm",
            "--network",
            "none",
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
            _script(pipeline),
        ],
        capture_output=True,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"bare docker run failed: {done.stdout[-2000:]!r} {done.stderr[-2000:]!r}")
    return elapsed


def time_run(runner: CIRunner, request: CIRequest, steps_s: list[float] | None = None) -> float:
    """The run's wall time; the time its steps took is appended to `steps_s` (the rest is the
    sandbox's start, the copy of the checkout, the report and the removal)."""
    started = time.perf_counter()
    result = runner.run(request)
    elapsed = time.perf_counter() - started
    if result.status is not CIStatus.PASSED:
        logs = [s.log[-1500:] for s in result.steps if not s.succeeded]
        raise SystemExit(f"expected a passing run, got {result.status}: {result.error} {logs}")
    if steps_s is not None:
        steps_s.append(sum(s.duration_s for s in result.steps))
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each (after a warm-up)")
    parser.add_argument("--functions", type=int, default=150, help="functions per Rust crate")
    parser.add_argument("--only", choices=("overhead", "cache"), help="run one of the two")
    args = parser.parse_args()
    console = Console()
    scratch = Path(tempfile.mkdtemp(prefix="arena-bench-env-"))
    settings = CISettings(cache_dir=scratch / "cache")
    if settings.build_ca_bundle is None and HOST_CA.is_file():
        settings = settings.model_copy(update={"build_ca_bundle": HOST_CA})
    client = connect()
    images = ImageBuilder(client, settings)
    environments = EnvironmentBuilder(images)
    runner = CIRunner(settings, client)
    workspaces = Workspaces.from_settings(settings)
    table = Table(title=f"environment images (median of {args.runs})")
    for column in ("measure", "baseline", "ours", "ratio", "target"):
        table.add_column(column)
    built: list[str] = []
    try:
        # (1) a validation run from an environment image against bare docker run
        if args.only in (None, "overhead"):
            repo, commit = _repo(PYTHON_FILES, scratch, "py")
            pipeline = python_pipeline()
            spec = EnvironmentSpec(repo=repo, commit=commit, language="python", pipeline=pipeline)
            with console.status("building the Python environment image"):
                image = environments.ensure(spec)
            built.append(image)
            prepared, _ = workspaces.checkout(repo, commit)
            request = CIRequest(repo=repo, commit=commit, pipeline=pipeline, image=image)
            bare, ours = [], []
            for attempt in range(args.runs + 1):
                with console.status(f"python validation run {attempt}"):
                    b, o = time_bare(image, pipeline, prepared, scratch), time_run(runner, request)
                if attempt:
                    bare.append(b)
                    ours.append(o)
            b, o = statistics.median(bare), statistics.median(ours)
            table.add_row(
                "CI run from env image vs docker run",
                f"{b:.2f}s",
                f"{o:.2f}s",
                f"{o / b:.2f}x",
                "<= 1.2x",
            )

        # (2) a patched CI run with a warm cargo target against a cold one
        if args.only in (None, "cache"):
            repo, commit = _repo(rust_files(args.functions), scratch, "rs")
            spec = EnvironmentSpec(
                repo=repo, commit=commit, language="rust", pipeline=RUST_PIPELINE
            )
            with console.status("building the Rust environment image (warms the target dir)"):
                warm_image = environments.ensure(spec)
            built.append(warm_image)
            cold_pipeline = RUST_PIPELINE.model_copy(
                update={
                    "setup": (),
                    "steps": tuple(s for s in RUST_PIPELINE.steps if s.name == "test"),
                    "env": {**RUST_PIPELINE.env, "CARGO_NET_OFFLINE": "true"},
                }
            )
            patch = (rust_patch("delta"),)
            warm = CIRequest(
                repo=repo, commit=commit, pipeline=RUST_PIPELINE, image=warm_image, diffs=patch
            )
            cold = CIRequest(
                repo=repo,
                commit=commit,
                pipeline=cold_pipeline,
                image=images.ensure("rust"),
                diffs=patch,
            )
            colds, warms = [], []
            cold_steps: list[float] = []
            warm_steps: list[float] = []
            for attempt in range(args.runs + 1):
                with console.status(f"rust patched run {attempt}"):
                    c = time_run(runner, cold, cold_steps)
                    w = time_run(runner, warm, warm_steps)
                if attempt:
                    colds.append(c)
                    warms.append(w)
            c, w = statistics.median(colds), statistics.median(warms)
            table.add_row(
                "patched Rust run: warm cache vs cold",
                f"{c:.2f}s",
                f"{w:.2f}s",
                f"{w / c:.2f}x",
                "<= 0.3x",
            )
            cs, ws = statistics.median(cold_steps[1:]), statistics.median(warm_steps[1:])
            table.add_row(
                "  of which outside the steps",
                f"{c - cs:.2f}s",
                f"{w - ws:.2f}s",
                "",
                "",
            )
    finally:
        for tag in built:
            subprocess.run(["docker", "rmi", tag], capture_output=True, check=False)
        shutil.rmtree(scratch, ignore_errors=True)
    console.print(table)


if __name__ == "__main__":
    main()
