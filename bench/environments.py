"""Environment images: their CI-run overhead, and what a warm build cache saves.

(1) For a task with an environment image (setup pip-installs a PyPI package), a CI run of
its validation once the image exists, by `CIRunner.run` in a warm process, against a bare
`docker run --network none` of the same steps from the same image (target: at most 1.2x).
(2) On a cargo workspace of several crates, a CI run after a patch to one crate from the
environment image (target dir warmed at the base commit) against the same run from the
bare toolchain image, where everything compiles (target: at most 0.3x).
(3) Per real instance of shared/data/swingarena-real (imported as shipped, its repo from a
`git clone --mirror` of its bundle through `--mirror`-style rules): its environment build
(time, image size and own layer), then a CI run of the gold patch from the environment image
against a bare `docker run` of the same steps (its services started beside it), as in (1).
Instances refused at import are listed with the reason; the C++ one is a heavy build,
skipped unless `--with-cpp` or named by `--only`.
(4) `--only layers`: N tasks of one repository (the first N lines of `--repo` in `--jsonl`
that import, their repo through `--mirror` rules, fetched by hand: never in tests), their
environments built one after another twice: each whole (ARENA_ENV_LAYERS=false), then each
on the repository layer (the first one's image). Prints the total build time and the disk
the images' own layers take, and their ratios (target: under 0.4x both, for N = 5).
Prints the median of several runs of each.

    python bench/environments.py [--only overhead|cache|real|layers|INSTANCE]... [--with-cpp]
        [--jsonl FILE --repo OWNER/NAME --count N --mirror FROM=TO]
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
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the test projects, uninstalled

from rich.console import Console
from rich.table import Table

from arena.ci import environment_spec
from arena.tasks.gitrepo import commit_directory
from arena.tasks.importer import import_jsonl
from arena.tasks.pipelines import with_pipeline
from arena.tasks.schema import Task, TaskError
from bench.ci_overhead import hand_to_uid
from ci_runner import CIRequest, CIRunner, CISettings, CIStatus, Pipeline
from ci_runner.environments import (
    EnvironmentBuilder,
    EnvironmentBuildError,
    EnvironmentSpec,
    environment_images,
)
from ci_runner.git_mirrors import GitMirrors
from ci_runner.images import ImageBuilder
from ci_runner.providers.docker.engine import connect
from ci_runner.providers.docker.provider import DockerProvider
from ci_runner.providers.docker.sandbox import sandbox_uid
from ci_runner.sandbox.image_store import ImageStore
from ci_runner.services import ServiceImages, kind_of, service_port
from ci_runner.workspace import Workspaces
from tests.ci_runner.env_projects import (
    PYTHON_FILES,
    RUST_PIPELINE,
    python_pipeline,
    rust_files,
    rust_patch,
)
from tests.shared_data import shared_data

HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
REAL = shared_data() / "swingarena-real"
SECTIONS = ("overhead", "cache", "real", "layers")
HEAVY = ("cpp",)  # languages skipped unless --with-cpp or named


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


def time_bare(
    image: str,
    pipeline: Pipeline,
    prepared: Path,
    scratch: Path,
    check: bool = True,
    network: str = "none",
) -> float:
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
            network,
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
    if check and done.returncode != 0:
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


@dataclass
class RealOutcome:
    """One real instance: refused, skipped, failed (why) or measured."""

    instance: str
    language: str
    state: str = "refused"
    note: str = ""
    toolchain_s: float | None = None
    build_s: float | None = None
    reused: bool = False  # the image was in the engine already (content-keyed, shared)
    tag: str = ""
    image_mb: float | None = None
    own_mb: float | None = None
    status: str = ""
    bare_s: list[float] = field(default_factory=list)
    ours_s: list[float] = field(default_factory=list)


def _bundle_mirrors(folder: Path) -> GitMirrors:
    """`git clone --mirror` of every bundle, standing in for GitHub (the lines are as shipped)."""
    folder.mkdir(parents=True, exist_ok=True)
    for bundle in sorted(REAL.glob("*.bundle")):
        target = folder / f"{bundle.stem}.git"
        if not target.exists():
            subprocess.run(["git", "clone", "-q", "--mirror", str(bundle), str(target)], check=True)
    return GitMirrors.parse([f"https://github.com/={folder}/{{owner}}+{{name}}.git"])


def _import_real(workspaces: Workspaces) -> tuple[list[Task], list[RealOutcome]]:
    tasks: list[Task] = []
    refused: list[RealOutcome] = []
    for path in sorted(REAL.glob("*_filtered_instance_list.jsonl")):
        lines = path.read_text().splitlines()
        report = import_jsonl(path, workspaces)
        tasks += report.tasks
        for error in report.errors:
            record = json.loads(lines[error.line - 1])
            note = f"{error.reason}: {error.message.splitlines()[0][:160]}"
            refused.append(RealOutcome(record["instance_id"], path.name.split("_")[0], note=note))
    return tasks, refused


def _own_size(store: ImageStore, tag: str) -> tuple[float, float] | None:
    """The image's size and its own layers' (as the store counts them), in MB."""
    for image in environment_images(store.usage().images):
        if image.tag == tag:
            return image.size_bytes / 1e6, image.own_bytes / 1e6
    return None


def _start_services(pipeline: Pipeline, images: ImageBuilder, name: str) -> list[str]:
    """The job's services as `docker run -d` containers, ready; the first one's network
    namespace is the job's (as a CI run shares its own with them)."""
    started: list[str] = []
    owner = ""
    for n, (service_name, service) in enumerate(sorted(pipeline.services.items())):
        kind = kind_of(service.image)
        image = ServiceImages(images).ensure(kind)
        env = {**service.env, "ARENA_PORT": str(service_port(service, kind))}
        network = "none" if not owner else f"container:{owner}"
        container = f"{name}-{n}"
        command = ["docker", "run", "-d", "--rm", "--init", "--name", container]
        command += ["--network", network, "--tmpfs", "/tmp"]
        for key, value in env.items():
            command += ["-e", f"{key}={value}"]
        subprocess.run([*command, image], capture_output=True, check=True)
        started.append(container)
        owner = owner or container
        deadline = time.monotonic() + 120
        while subprocess.run(
            ["docker", "exec", container, "sh", "-c", kind.ready], capture_output=True
        ).returncode:
            if time.monotonic() > deadline:
                raise SystemExit(f"bare service {service_name} was not ready")
            time.sleep(0.5)
    return started


def time_bare_job(
    image: str, pipeline: Pipeline, prepared: Path, scratch: Path, images: ImageBuilder
) -> float:
    """A bare `docker run` of the steps, the job's services started first (timed with it)."""
    started = time.perf_counter()
    services = _start_services(pipeline, images, f"arena-bench-svc-{os.getpid()}")
    try:
        network = f"container:{services[0]}" if services else "none"
        time_bare(image, pipeline, prepared, scratch, check=False, network=network)
    finally:
        for container in services:
            subprocess.run(["docker", "rm", "-f", container], capture_output=True, check=False)
    return time.perf_counter() - started


def measure_real(
    console: Console,
    task: Task,
    environments: EnvironmentBuilder,
    runner: CIRunner,
    workspaces: Workspaces,
    scratch: Path,
    runs: int,
) -> RealOutcome:
    outcome = RealOutcome(task.instance_id, task.language.value, state="failed")
    try:
        derived = with_pipeline(task, workspaces)
        spec = environment_spec(derived)
        if not environments.needs_build(spec):
            outcome.note = "needs no environment image (its toolchain image is enough)"
            return outcome
        images = environments.images
        with console.status(f"{task.instance_id}: toolchain image"):
            started = time.perf_counter()
            images.ensure_toolchain(spec.language, environments.toolchain_for(spec))
            outcome.toolchain_s = time.perf_counter() - started
        state = environments.state(spec)
        outcome.reused = state is not None and state.built
        with console.status(f"{task.instance_id}: building its environment") as status:
            started = time.perf_counter()
            tag = environments.ensure(
                spec, lambda line: status.update(f"{task.instance_id}: {line[:100]}"), retry=True
            )
            outcome.build_s = time.perf_counter() - started
        outcome.tag = tag
    except (EnvironmentBuildError, TaskError) as exc:
        outcome.note = str(exc).splitlines()[0][:300]
        if outcome.toolchain_s is not None:  # the build ran: the time it took to fail
            outcome.build_s = time.perf_counter() - started
        return outcome
    sizes = _own_size(images.provider.images, tag)
    if sizes is not None:
        outcome.image_mb, outcome.own_mb = sizes
    pipeline = derived.require_pipeline()
    diffs = tuple(d for d in (task.patch, task.test_patch) if d.strip())
    request = CIRequest(
        repo=task.repo, commit=task.base_commit, pipeline=pipeline, image=tag, diffs=diffs
    )
    prepared, _ = workspaces.checkout(task.repo, task.base_commit)
    for diff in diffs:
        subprocess.run(["git", "apply", "-"], cwd=prepared, input=diff.encode(), check=True)
    statuses: list[str] = []
    for attempt in range(runs + 1):
        with console.status(f"{task.instance_id}: gold-patch run {attempt} (bare, then ours)"):
            b = time_bare_job(tag, pipeline, prepared, scratch, images)
            started = time.perf_counter()
            result = runner.run(request)
            o = time.perf_counter() - started
        statuses.append(result.status.value)
        if attempt:
            outcome.bare_s.append(b)
            outcome.ours_s.append(o)
    shutil.rmtree(prepared, ignore_errors=True)
    outcome.state = "measured"
    outcome.status = ", ".join(dict.fromkeys(statuses))
    return outcome


def real_instances(
    console: Console,
    environments: EnvironmentBuilder,
    runner: CIRunner,
    scratch: Path,
    wanted: set[str],
    with_cpp: bool,
    runs: int,
) -> list[RealOutcome]:
    """Every instance of shared/data/swingarena-real (or those in `wanted`), measured."""
    rules = _bundle_mirrors(scratch / "bundle-mirrors")
    workspaces = Workspaces.from_settings(environments.images.settings, rules)
    with console.status("importing the real instances"):
        tasks, outcomes = _import_real(workspaces)
    if wanted:
        outcomes = [o for o in outcomes if o.instance in wanted]
    for task in sorted(tasks, key=lambda t: (t.language.value, t.instance_id)):
        heavy = task.language.value in HEAVY and not with_cpp
        if wanted and task.instance_id not in wanted and not heavy:
            continue
        if heavy and task.instance_id not in wanted:  # always listed, with why
            note = "heavy C++ build (CMake, clang), skipped: --with-cpp or --only it"
            outcomes.append(RealOutcome(task.instance_id, task.language.value, "skipped", note))
            continue
        outcomes.append(
            measure_real(console, task, environments, runner, workspaces, scratch, runs)
        )
    return outcomes


@dataclass
class LayeredBuilds:
    """N builds of one repository's tasks, one way: each build's time and own bytes."""

    how: str
    seconds: list[float] = field(default_factory=list)
    own_bytes: list[int] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)


def _repository_tasks(
    jsonl: Path, repo: str, count: int, workspaces: Workspaces, scratch: Path
) -> list[Task]:
    """The first `count` lines of `repo` in `jsonl` that import."""
    lines = [
        line
        for line in jsonl.read_text().splitlines()
        if line.strip() and json.loads(line).get("repo") == repo
    ]
    if not lines:
        raise SystemExit(f"{jsonl} has no line of {repo}")
    picked = scratch / "lines" / jsonl.name  # its name gives the language
    picked.parent.mkdir(parents=True, exist_ok=True)
    picked.write_text("\n".join(lines) + "\n")
    tasks = import_jsonl(picked, workspaces).tasks[:count]
    if len(tasks) < 2:
        raise SystemExit(f"only {len(tasks)} of {len(lines)} lines of {repo} imported")
    return tasks


def _build_all(
    console: Console, settings: CISettings, tasks: list[Task], how: str, layers: bool
) -> LayeredBuilds:
    settings = settings.model_copy(
        update={"env_layers": layers, "cache_dir": settings.cache_dir.parent / f"cache-{how}"}
    )
    client = connect()
    environments = EnvironmentBuilder(ImageBuilder(DockerProvider(settings, client), settings))
    outcome = LayeredBuilds(how)
    for n, task in enumerate(tasks):
        spec = environment_spec(task)
        toolchain = environments.images.ensure_toolchain(
            spec.language, environments.toolchain_for(spec)
        )
        state = environments.state(spec)
        # built before this benchmark (an earlier trial): timed, it would cost nothing
        built = state.tag if state is not None and state.built else None
        if built is not None and not environments.remove_images([built]):
            raise SystemExit(f"{built} exists and cannot be removed: remove it first")
        with console.status(f"{how}: building {task.instance_id} ({n + 1}/{len(tasks)})"):
            started = time.perf_counter()
            try:
                tag = environments.ensure(spec)
            except EnvironmentBuildError as exc:
                raise SystemExit(f"{task.instance_id}: {str(exc)[:2000]}") from exc
            outcome.seconds.append(time.perf_counter() - started)
        record = environments.record(spec)
        below = (record.built_on if record else None) or toolchain
        size = client.images.get(tag).attrs["Size"]
        outcome.own_bytes.append(int(size) - int(client.images.get(below).attrs["Size"]))
        outcome.tags.append(tag)
        console.print(
            f"{how}: {task.instance_id} built in {outcome.seconds[-1]:.0f}s, own "
            f"{outcome.own_bytes[-1] / 1e6:.0f} MB"
            + (f" over {below}" if record and record.built_on else "")
        )
    return outcome


def layered_builds(
    console: Console, settings: CISettings, args: argparse.Namespace, scratch: Path
) -> Table:
    """Section (4): N builds whole against N builds on the repository layer."""
    if args.jsonl is None or args.repo is None:
        raise SystemExit("--only layers needs --jsonl FILE and --repo OWNER/NAME")
    rules = GitMirrors.parse(args.mirror) if args.mirror else None
    workspaces = Workspaces.from_settings(settings, rules)
    with console.status(f"importing the lines of {args.repo}"):
        tasks = _repository_tasks(Path(args.jsonl), args.repo, args.count, workspaces, scratch)
    settings = settings.model_copy(update={"git_mirrors": dict(rules.rules) if rules else {}})
    runs: list[LayeredBuilds] = []
    try:
        for how, layers in (("whole", False), ("layered", True)):
            runs.append(_build_all(console, settings, tasks, how, layers))
            # each way from the same engine state: the other's images gone (children first)
            for tag in reversed(runs[-1].tags):
                subprocess.run(["docker", "rmi", tag], capture_output=True, check=False)
    finally:
        for run in runs:
            for tag in reversed(run.tags):
                subprocess.run(["docker", "rmi", tag], capture_output=True, check=False)
    whole, layered = runs
    table = Table(title=f"{len(tasks)} environments of {args.repo}: whole vs layered")
    for column in ("measure", "whole", "layered", "ratio", "target"):
        table.add_column(column)
    ws, ls = sum(whole.seconds), sum(layered.seconds)
    wb, lb = sum(whole.own_bytes), sum(layered.own_bytes)
    table.add_row("build time", f"{ws:.0f}s", f"{ls:.0f}s", f"{ls / ws:.2f}x", "< 0.4x")
    table.add_row(
        "disk (own layers)", f"{wb / 1e6:.0f} MB", f"{lb / 1e6:.0f} MB", f"{lb / wb:.2f}x", "< 0.4x"
    )
    for n, task in enumerate(tasks):
        table.add_row(
            f"  {task.instance_id}",
            f"{whole.seconds[n]:.0f}s, {whole.own_bytes[n] / 1e6:.0f} MB",
            f"{layered.seconds[n]:.0f}s, {layered.own_bytes[n] / 1e6:.0f} MB",
            "",
            "",
        )
    return table


def real_table(outcomes: list[RealOutcome]) -> Table:
    table = Table(title="real instances: environment build, then gold-patch CI runs (median)")
    for column in (
        "instance",
        "language",
        "build",
        "image (own layer)",
        "docker run",
        "ours",
        "ratio",
        "target",
        "note",
    ):
        table.add_column(column)
    for o in outcomes:
        build = ""
        if o.build_s is not None:
            build = "reused 0s" if o.reused else f"{o.build_s:.0f}s"
            build += " (failed)" if o.state == "failed" else ""
            if o.toolchain_s and o.toolchain_s > 1:
                build += f" (+{o.toolchain_s:.0f}s toolchain)"
        size = f"{o.image_mb:.0f} MB ({o.own_mb:.0f} MB)" if o.image_mb is not None else ""
        ratio = bare = ours = ""
        if o.bare_s and o.ours_s:
            b, w = statistics.median(o.bare_s), statistics.median(o.ours_s)
            bare, ours, ratio = f"{b:.1f}s", f"{w:.1f}s", f"{w / b:.2f}x"
        note = o.note if o.state != "measured" else f"runs: {o.status}"
        table.add_row(
            o.instance,
            o.language,
            build or o.state,
            size,
            bare,
            ours,
            ratio,
            "<= 1.2x" if ratio else "",
            note,
        )
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each (after a warm-up)")
    parser.add_argument("--functions", type=int, default=150, help="functions per Rust crate")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="SECTION|INSTANCE",
        help="overhead, cache, real, or a real instance's id (repeatable; default: all)",
    )
    parser.add_argument("--with-cpp", action="store_true", help="measure the C++ instance too")
    parser.add_argument(
        "--keep-images", action="store_true", help="keep the real instances' images it built"
    )
    parser.add_argument("--real-runs", type=int, default=3, help="timed runs per real instance")
    parser.add_argument("--jsonl", help="layers: a SwingArena file with the repository's lines")
    parser.add_argument("--repo", help="layers: the repository (OWNER/NAME) whose lines to build")
    parser.add_argument("--count", type=int, default=5, help="layers: how many of its lines")
    parser.add_argument(
        "--mirror", action="append", default=[], metavar="FROM=TO", help="layers: mirror rules"
    )
    args = parser.parse_args()
    instances = {o for o in args.only if o not in SECTIONS}
    sections = {o for o in args.only if o in SECTIONS} | ({"real"} if instances else set())
    sections = sections or set(SECTIONS) - {"layers"}  # layers needs a repository
    console = Console()
    scratch = Path(tempfile.mkdtemp(prefix="arena-bench-env-"))
    settings = CISettings(cache_dir=scratch / "cache")
    if settings.build_ca_bundle is None and HOST_CA.is_file():
        settings = settings.model_copy(update={"build_ca_bundle": HOST_CA})
    client = connect()
    images = ImageBuilder(DockerProvider(settings, client), settings)
    environments = EnvironmentBuilder(images)
    runner = CIRunner(settings, DockerProvider(settings, client))
    workspaces = Workspaces.from_settings(settings)
    table = Table(title=f"environment images (median of {args.runs})")
    for column in ("measure", "baseline", "ours", "ratio", "target"):
        table.add_column(column)
    built: list[str] = []
    try:
        # (1) a validation run from an environment image against bare docker run
        if "overhead" in sections:
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
        if "cache" in sections:
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
        if "layers" in sections:
            console.print(layered_builds(console, settings, args, scratch))
        if "real" in sections:
            outcomes = real_instances(
                console, environments, runner, scratch, instances, args.with_cpp, args.real_runs
            )
            if not args.keep_images:  # what was in the engine before stays there
                built += [o.tag for o in outcomes if o.tag and not o.reused]
            console.print(real_table(outcomes))
    finally:
        for tag in built:
            subprocess.run(["docker", "rmi", tag], capture_output=True, check=False)
        shutil.rmtree(scratch, ignore_errors=True)
    if table.row_count:
        console.print(table)


if __name__ == "__main__":
    main()
