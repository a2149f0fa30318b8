"""The real SwingArena instances end to end, as a user runs them: per instance, the stage it
reached (imported, environment built, validated, played), the legs considered and chosen,
the reason where it stopped, and the time each stage took.

Mirrors are made from the bundles in shared/data/swingarena-real and named through
`--mirror`, so the dataset lines are imported as shipped. Every stage is the `arena` command
a user would type; the cache is its own (`--cache`, default a fresh temporary folder), so a
second run with the same `--cache` reuses environment images and CI results.

    python bench/real_instances.py [--only ID]... [--with-cpp] [--cache DIR] [--json FILE]

The C++ instance (a heavy CMake build, single-threaded by its own script) is left out unless
`--with-cpp` or named by `--only`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the test data's locator, uninstalled
from tests.shared_data import shared_data  # noqa: E402

REAL = shared_data() / "swingarena-real"
ARENA = str(Path(sys.executable).parent / "arena")


@dataclass
class Outcome:
    instance: str
    language: str = ""
    stage: str = "refused"
    reason: str = ""
    chosen: str = ""
    legs: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    result: str = ""


def _arena(
    env: dict[str, str], *args: str, timeout: float = 7200
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ARENA, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def _mirrors(folder: Path) -> str:
    for bundle in sorted(REAL.glob("*.bundle")):
        target = folder / f"{bundle.stem}.git"
        if not target.exists():
            subprocess.run(["git", "clone", "-q", "--mirror", str(bundle), str(target)], check=True)
    return f"https://github.com/={folder}/{{owner}}+{{name}}.git"


def run(only: list[str], cache: Path, with_cpp: bool = False) -> list[Outcome]:
    env = {**os.environ, "ARENA_CACHE_DIR": str(cache)}
    rule = _mirrors(cache / "bundle-mirrors")
    outcomes: dict[str, Outcome] = {}
    for path in sorted(REAL.glob("*_filtered_instance_list.jsonl")):
        lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        wanted = [r for r in lines if r["instance_id"] in only] if only else lines
        if not only and not with_cpp and path.name.startswith("cpp"):
            wanted = []
        if not wanted:
            continue
        subset = cache / path.name
        subset.write_text("".join(json.dumps(r) + "\n" for r in wanted))
        started = time.monotonic()
        done = _arena(env, "tasks", "import", str(subset), "--mirror", rule)
        took = (time.monotonic() - started) / len(wanted)
        for record in wanted:
            outcome = Outcome(record["instance_id"], path.name.split("_")[0])
            outcome.seconds["import"] = round(took, 1)
            for line in done.stderr.splitlines():
                number = line.removeprefix("line ").split(":")[0]
                if number.isdigit() and wanted[int(number) - 1] is record:
                    outcome.reason = line.split(": ", 1)[1]
            outcomes[outcome.instance] = outcome
        if done.returncode not in (0, 2):
            raise SystemExit(f"arena tasks import failed: {done.stderr[-2000:]}")
    library = [json.loads(line) for line in (cache / "tasks.jsonl").read_text().splitlines()]
    for task in library:
        outcome = outcomes.get(task["instance_id"])
        if outcome is None:
            continue
        outcome.stage = "imported"
        outcome.chosen = task.get("ci_job") or ""
        outcome.legs = [
            f"{leg['leg']}: {leg['status']} ({leg['why']})" for leg in task.get("ci_legs", [])
        ]
    for outcome in outcomes.values():
        if outcome.stage != "imported":
            continue
        started = time.monotonic()
        built = _arena(env, "tasks", "build-env", "--tasks", "imported", "--only", outcome.instance)
        outcome.seconds["build-env"] = round(time.monotonic() - started, 1)
        if built.returncode != 0:
            outcome.reason = (built.stdout + built.stderr).strip()[-600:]
            continue
        outcome.stage = "environment built"
        started = time.monotonic()
        checked = _arena(
            env, "tasks", "validate", "--tasks", "imported", "--only", outcome.instance, "--json"
        )
        outcome.seconds["validate"] = round(time.monotonic() - started, 1)
        try:
            verdict = json.loads(checked.stdout)[0]
        except (json.JSONDecodeError, IndexError):
            outcome.reason = (checked.stdout + checked.stderr).strip()[-600:]
            continue
        if not verdict.get("valid"):
            outcome.reason = str(verdict.get("reason"))
            continue
        outcome.stage = "validated"
        started = time.monotonic()
        played = _arena(
            env,
            "play",
            "--task",
            outcome.instance,
            "--a",
            "oracle",
            "--b",
            "null",
            "--tasks",
            "imported",
            "--json",
        )
        outcome.seconds["play"] = round(time.monotonic() - started, 1)
        try:
            match = json.loads(played.stdout)
        except json.JSONDecodeError:
            outcome.reason = (played.stdout + played.stderr).strip()[-600:]
            continue
        outcome.result = f"{match.get('result')} {match.get('score')}"
        outcome.stage = "played"
    return list(outcomes.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--cache", type=Path)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--with-cpp", action="store_true", help="the C++ instance too")
    args = parser.parse_args()
    cache = args.cache or Path(tempfile.mkdtemp(prefix="arena-real-"))
    cache.mkdir(parents=True, exist_ok=True)
    outcomes = run(args.only, cache, args.with_cpp)
    for o in outcomes:
        times = ", ".join(f"{k} {v:.0f} s" for k, v in o.seconds.items())
        print(f"{o.instance} [{o.language}]: {o.stage}; chosen {o.chosen or '-'}; {times}")
        if o.result:
            print(f"    result: {o.result}")
        if o.reason:
            print(f"    reason: {o.reason[:400]}")
        for leg in o.legs[:12]:
            print(f"    leg {leg[:200]}")
    if args.json:
        args.json.write_text(json.dumps([asdict(o) for o in outcomes], indent=2))


if __name__ == "__main__":
    main()
