"""`arena tasks trial`: a seeded sample of a dataset's lines, each taken as far as it goes
within its time cap, kept with whose fault each stop is and shown by `arena tasks report`."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.tasks.trials import (
    Fault,
    TrialRecord,
    TrialStage,
    fault_of,
    keep_trial,
    ranked_lines,
    read_trials,
    summarize,
    trials_path,
)
from tests.ci_runner.projects import PYTHON
from tests.command import run_arena
from tests.conftest import MakeRepo


def _line(instance_id: str, repo: str, **extra: object) -> str:
    record = {
        "instance_id": instance_id,
        "repo": repo,
        "base_commit": "a" * 40,
        "patch": PYTHON.fix,
        "ci_name_list": ["test"],
        **extra,
    }
    return json.dumps(record)


def test_a_seed_ranks_lines_the_same_way_every_time_and_another_seed_differently() -> None:
    lines = [_line(f"octo__calc-{n}", "octo/calc") for n in range(40)] + ["{not json"]
    first = ranked_lines(Path("python_x.jsonl"), lines, "20261206")
    again = ranked_lines(Path("python_x.jsonl"), lines, "20261206")
    other = ranked_lines(Path("python_x.jsonl"), lines, "1")
    assert [s.line for s in first] == [s.line for s in again]
    assert [s.line for s in first] != [s.line for s in other]
    assert sorted(s.line for s in first) == list(range(1, 42))  # every line, the bad one too
    assert {s.instance_id for s in first if s.line == 41} == {"line-41"}


@pytest.mark.parametrize(
    ("category", "fault"),
    [
        ("mirror incomplete", Fault.SOURCE),
        ("repo host unreachable", Fault.MACHINE),
        ("needs a newer toolchain than this machine has", Fault.MACHINE),
        ("language not supported: typescript", Fault.SCOPE),
        ("missing base_commit", Fault.DATASET),
        ("Windows or macOS only", Fault.REPOSITORY),
        ("gold tests do not fail without the fix", Fault.UNDECIDED),
        ("Arena could not read the line (Arena's fault)", Fault.ARENA),
        ("environment build failed", Fault.ARENA),
        (None, Fault.NONE),
    ],
)
def test_every_stop_says_whose_fault_it_is(category: str | None, fault: Fault) -> None:
    assert fault_of(category) is fault


def test_the_summary_counts_lines_that_reached_each_stage_and_why_the_rest_stopped() -> None:
    def record(n: int, stage: TrialStage, category: str | None) -> TrialRecord:
        return TrialRecord(
            instance_id=f"i-{n}", source_file="f", line=n, rank=n, seed="s", language="go",
            stage=stage, category=category, reason=None, seconds={"import": float(n)},
        )  # fmt: skip

    summary = summarize(
        [
            record(1, TrialStage.REFUSED, "mirror incomplete"),
            record(2, TrialStage.REFUSED, "mirror incomplete"),
            record(3, TrialStage.VALIDATED, "time cap reached"),
            record(4, TrialStage.PLAYED, None),
        ]
    )
    assert summary.reached == {
        "imported": 2,
        "environment built": 2,
        "validated": 2,
        "played": 1,
    }
    assert summary.stopped[0] == ("mirror incomplete", "refused", Fault.SOURCE.value, 2)
    assert summary.median_seconds == {"import": 3.0}


def _dataset(folder: Path, lines: list[str]) -> Path:
    """The lines as a published Python file (its name gives them their language)."""
    dataset = folder / "python_filtered_instance_list.jsonl"
    dataset.write_text("\n".join(lines) + "\n")
    return dataset


@pytest.fixture
def silent_server() -> Iterator[str]:
    """An HTTP address that accepts connections and never answers (a git host that hangs)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join()
    for connection in held:
        connection.close()
    server.close()


def test_a_trial_takes_each_sampled_line_as_far_as_it_goes_and_keeps_it(
    tmp_path: Path, silent_server: str
) -> None:
    lines = [
        _line("octo__calc-1", str(tmp_path / "no-such-repo")),  # repo not found
        _line("octo__calc-2", f"{silent_server}/octo/calc.git"),  # hangs: the cap stops it
        _line("octo__calc-4", "octo/calc", patch="x", test_patch="x"),  # the same patches
        _line("other__calc-5", "octo/calc"),  # the instance names another repo
    ]
    dataset = _dataset(tmp_path, lines)
    cache = tmp_path / "cache"
    done = run_arena(
        ["tasks", "trial", str(dataset), "--count", "9", "--seed", "7", "--cap", "6"],
        ARENA_CACHE_DIR=str(cache),
    )
    assert done.returncode == 0, done.stderr
    kept = {r.instance_id: r for r in read_trials(trials_path(cache))}
    assert sorted(kept) == sorted(["octo__calc-1", "octo__calc-2", "octo__calc-4", "other__calc-5"])
    assert (kept["octo__calc-1"].category, kept["octo__calc-1"].fault) == (
        "repo not found",
        Fault.SOURCE,
    )
    hung = kept["octo__calc-2"]
    assert (hung.stage, hung.category) == (TrialStage.REFUSED, "time cap reached")
    assert hung.fault is Fault.TIME and "import" in (hung.reason or "")
    assert hung.seconds["import"] < 30  # stopped at the cap, not when git gave up
    for instance_id in ("octo__calc-4", "other__calc-5"):
        record = kept[instance_id]
        assert (record.stage, record.fault) == (TrialStage.REFUSED, Fault.DATASET)
        assert record.category == "dataset line inconsistent"
    assert "Why lines stopped" in done.stdout and "whose fault" in done.stdout

    shown = run_arena(["tasks", "report", "--json"], ARENA_CACHE_DIR=str(cache))
    assert shown.returncode == 0, shown.stderr
    trials = json.loads(shown.stdout)["trials"]
    assert {t["instance_id"] for t in trials["lines"]} == set(kept)
    assert trials["summary"]["lines"] == 4


def test_a_line_whose_repo_cannot_be_fetched_is_replaced_by_the_next(
    tmp_path: Path, make_repo: MakeRepo
) -> None:
    """Whether or not its import would fetch anything: a line refused before the fetch whose
    repo is out of reach is skipped too, so the sample does not depend on the refusal."""
    repo, commit = make_repo(PYTHON.files)
    lines = [
        _line("octo__calc-1", str(tmp_path / "no-such-repo")),
        _line("octo__calc-2", str(tmp_path / "gone"), patch="x", test_patch="x"),
        _line("octo__calc-4", repo, base_commit=commit, patch="x", test_patch="x"),
        _line("other__calc-5", repo, base_commit=commit),
    ]
    dataset = _dataset(tmp_path, lines)
    cache = tmp_path / "cache"
    done = run_arena(
        ["tasks", "trial", str(dataset), "--count", "2", "--seed", "7", "--skip-unreachable"],
        ARENA_CACHE_DIR=str(cache),
    )
    assert done.returncode == 0, done.stderr
    kept = {r.instance_id for r in read_trials(trials_path(cache))}
    assert kept == {"octo__calc-4", "other__calc-5"}
    assert "skipped octo__calc-1: repo not found" in done.stderr
    assert "skipped octo__calc-2: repo not found" in done.stderr


def test_a_resumed_trial_counts_the_lines_it_tried_and_runs_only_the_rest(tmp_path: Path) -> None:
    lines = [_line(f"octo__calc-{n}", "octo/calc", patch="x", test_patch="x") for n in range(4)]
    dataset = _dataset(tmp_path, lines)
    cache = tmp_path / "cache"
    first = run_arena(
        ["tasks", "trial", str(dataset), "--count", "2", "--seed", "7"],
        ARENA_CACHE_DIR=str(cache),
    )
    assert first.returncode == 0, first.stderr
    tried = {r.instance_id: r for r in read_trials(trials_path(cache))}
    assert len(tried) == 2

    resumed = run_arena(
        ["tasks", "trial", str(dataset), "--count", "4", "--seed", "7", "--resume"],
        ARENA_CACHE_DIR=str(cache),
    )
    assert resumed.returncode == 0, resumed.stderr
    kept = {r.instance_id: r for r in read_trials(trials_path(cache))}
    assert len(kept) == 4
    for instance_id, record in tried.items():
        assert kept[instance_id] == record  # kept as it was, not run again
        assert f"{instance_id}: refused" not in resumed.stderr
    rest = set(kept) - set(tried)
    assert all(f"{i}: refused" in resumed.stderr for i in rest)
    assert "Stages reached (4 lines)" in resumed.stdout

    other_seed = run_arena(
        ["tasks", "trial", str(dataset), "--count", "1", "--seed", "8", "--resume"],
        ARENA_CACHE_DIR=str(cache),
    )
    assert other_seed.returncode == 0, other_seed.stderr
    assert ": refused" in other_seed.stderr  # another seed's lines are tried anew


def test_a_resumed_trial_tries_again_the_lines_the_cap_stopped_when_asked(tmp_path: Path) -> None:
    lines = [_line(f"octo__calc-{n}", "octo/calc", patch="x", test_patch="x") for n in range(3)]
    dataset = _dataset(tmp_path, lines)
    cache = tmp_path / "cache"
    args = ["tasks", "trial", str(dataset), "--count", "3", "--seed", "7"]
    assert run_arena(args, ARENA_CACHE_DIR=str(cache)).returncode == 0
    tried = read_trials(trials_path(cache))
    capped = tried[0].model_copy(update={"category": "time cap reached", "reason": "cap"})
    keep_trial(trials_path(cache), capped)

    kept_as_is = run_arena([*args, "--resume"], ARENA_CACHE_DIR=str(cache))
    assert f"{capped.instance_id}: refused" not in kept_as_is.stderr
    again = run_arena([*args, "--resume", "--retry-capped"], ARENA_CACHE_DIR=str(cache))
    assert again.returncode == 0, again.stderr
    assert f"{capped.instance_id}: refused" in again.stderr
    assert sum(": refused" in line for line in again.stderr.splitlines()) == 1  # only it
    (retried,) = [r for r in read_trials(trials_path(cache)) if r.instance_id == capped.instance_id]
    assert retried.category == "dataset line inconsistent"


def test_without_a_docker_engine_the_trial_stops_at_the_first_line_that_needs_one(
    tmp_path: Path, make_repo: MakeRepo
) -> None:
    """No line's environment is blamed for the machine: the trial stops, saying why, and
    `--resume` goes on once an engine answers."""
    repo, commit = make_repo(PYTHON.files)
    pipeline = PYTHON.pipeline.model_dump(mode="json")
    lines = [
        _line("octo__calc-1", repo, base_commit=commit, pipeline=pipeline),
        _line("octo__calc-2", repo, base_commit=commit, pipeline=pipeline),
    ]
    dataset = _dataset(tmp_path, lines)
    cache = tmp_path / "cache"
    done = run_arena(
        ["tasks", "trial", str(dataset), "--count", "2", "--seed", "7"],
        ARENA_CACHE_DIR=str(cache),
        DOCKER_HOST=f"unix://{tmp_path}/no-engine.sock",
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert "no Docker engine answers" in done.stderr
    assert not trials_path(cache).exists() or read_trials(trials_path(cache)) == []
