"""One line never sinks a file: whatever a line's workflows hold, the import ends with that
line imported or refused in a category, and the other lines import.

The fuzz feeds the importer workflow files built from the expression and matrix shapes found in
the published corpus's repositories (object and array matrix values read by property and index,
`fromJSON` matrices, `case()`, filters over `needs.*`, reusable workflows, odd YAML types), in
every place a workflow holds an expression, for lines of every language.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import yaml

from arena.tasks.importer import ARENA_FAULT, import_lines
from ci_runner import CISettings
from ci_runner.workspace import Workspaces
from tests.ci_runner.projects import PYTHON
from tests.conftest import MakeRepo

# expression shapes as the corpus's workflows write them
EXPRESSIONS = [
    "matrix.os",
    "matrix.os.name",
    "matrix.os.version",
    "matrix.python-version[0]",
    "matrix.python-version[1]",
    "matrix['python-version'][0]",
    "matrix.config.os || matrix.platform.os",
    "matrix.build-env.os",
    "matrix",
    "toJSON(matrix)",
    "toJson(github)",
    "toJSON(github.event.issue.labels.*.name)",
    'fromJSON(\'["a", "b"]\')',
    "fromJSON('{\"x\": [1, 2]}').x[1]",
    "fromJSON(inputs.test-container)",
    "fromJson(steps.create_pr.outputs.result).url",
    "fromJSON(steps.bake.outputs.metadata)['a']['b']",
    "join(matrix.python-version, '-')",
    "join(fromJSON('[[1], {}]'))",
    "contains(matrix.python-version, '3.12')",
    "contains(github.event.pull_request.labels.*.name, 'ci')",
    "contains(needs.*.result, 'failure')",
    "!contains(fromJSON('[\"OWNER\"]'), github.event.pull_request.author_association)",
    "case(inputs.target-platform == 'linux', 5, 8)",
    "case(matrix.os.name == 'ubuntu', fromJSON('[1]'), 'x')",
    "case(true, 1)",
    "format('{0}-{1}', matrix.os, matrix.python-version)",
    "format('{0}', matrix.os.name)",
    "format('{1}', 'x')",
    "hashFiles('**/go.sum')",
    "github.head_ref || github.ref",
    "github.event.pull_request.head.sha",
    "github.event_name != 'push' && 1",
    "inputs.target-platform == 'linux' && 3 || 2",
    "matrix.race && '-race' || ''",
    "steps.vars.outputs.tag == 'x'",
    "secrets.TOKEN",
    "vars.FLAG == 'true'",
    "needs.setup.outputs.src == 'true' && !inputs.skip",
    "env.COMPILER == 'gcc' || env.LANG == 'c'",
    "runner.os == 'Linux'",
    "strategy.job-index",
    "always() && steps.start.outcome != 'success'",
    "!cancelled() && github.repository == 'o/r'",
    "failure()",
    "matrix.timeout || 15",
    "(matrix.compiler || 'gcc')",
    "1 == 1 == true",
    "matrix.os.*",
    "matrix.*.name",
    "'unclosed",
    "matrix.",
    "nosuchfunction(1)",
    "github.event.release.prerelease && 'a' || 'b'",
    "'x' < fromJSON('{}')",
    "0x10 + 1",
]

MATRICES: list[Any] = [
    {
        "os": [
            {"name": "ubuntu", "version": "ubuntu-22.04"},
            {"name": "windows", "version": "windows-latest"},
        ]
    },
    {"python-version": [["3.12", "312"], ["3.11", "311"]]},
    {"config": [{"os": "ubuntu-latest", "cc": {"name": "gcc", "v": [12]}}]},
    {"include": [{"os": "ubuntu-latest", "extra": {"a": 1}}, {"os": {"name": "macos"}}]},
    {"os": ["ubuntu-latest"], "exclude": [{"os": {"x": 1}}], "include": "${{ fromJSON('[]') }}"},
    "${{ fromJSON(needs.setup.outputs.matrix) }}",
    {"os": "ubuntu-latest"},
    {"axis": [None, True, 3.5, "x"]},
    [1, 2],
    {"a": list(range(20)), "b": list(range(20))},
    None,
]

RUNS_ON: list[Any] = [
    "ubuntu-latest",
    "${{ matrix.os }}",
    "${{ matrix.os.version }}",
    ["self-hosted", "${{ matrix.os.name }}"],
    {"group": "large", "labels": ["ubuntu-latest"]},
    "${{ fromJSON('[\"ubuntu-latest\"]') }}",
    None,
    42,
]

COMMANDS = [
    "python -m pytest -q",
    "go test ./...",
    "cargo test --workspace",
    "ctest --output-on-failure",
    "make test",
    "tox -e py${{ EXPR }}",
    "echo ${{ EXPR }} && python -m pytest",
]


def _expression(rng: random.Random) -> str:
    return rng.choice(EXPRESSIONS)


def _text(rng: random.Random, template: str = "${{ EXPR }}") -> str:
    return template.replace("EXPR", _expression(rng))


def _step(rng: random.Random) -> Any:
    kind = rng.randrange(9)
    if kind == 0:
        return {"uses": "actions/setup-python@v5", "with": {"python-version": _text(rng)}}
    if kind == 1:
        return {"uses": "actions-rs/cargo@v1", "with": {"command": "test", "args": _text(rng)}}
    if kind == 2:
        return {
            "if": _expression(rng),
            "run": rng.choice(COMMANDS).replace("EXPR", _expression(rng)),
        }
    if kind == 3:
        return {"run": _text(rng, "echo ${{ EXPR }}"), "env": {"X": _text(rng)}, "shell": "bash"}
    if kind == 4:
        return {"name": _text(rng), "run": rng.choice(COMMANDS).replace("EXPR", _expression(rng))}
    if kind == 5:
        return {"run": ["a", "list"], "working-directory": _text(rng)}
    if kind == 6:
        return {"uses": "./.github/actions/local", "with": {"a": {"nested": 1}}}
    if kind == 7:
        return None
    return {
        "run": rng.choice(COMMANDS).replace("EXPR", _expression(rng)),
        "if": rng.choice([True, 0, "${{ x", _text(rng)]),
    }


def _job(rng: random.Random, jobs: list[str]) -> Any:
    if rng.random() < 0.08:
        return rng.choice(["not a job", ["a", "list"], 7])
    job: dict[str, Any] = {
        "runs-on": rng.choice(RUNS_ON),
        "steps": [_step(rng) for _ in range(rng.randrange(1, 6))],
    }
    if rng.random() < 0.6:
        job["strategy"] = {"matrix": rng.choice(MATRICES), "fail-fast": _text(rng)}
    if rng.random() < 0.5:
        job["name"] = rng.choice(
            [_text(rng, "test (${{ EXPR }})"), {"an": "object"}, 3, _text(rng)]
        )
    if rng.random() < 0.3:
        job["if"] = _expression(rng)
    if rng.random() < 0.2:
        job["env"] = {"A": _text(rng), "B": {"nested": True}}
    if rng.random() < 0.15:
        job["container"] = rng.choice(["python:3.12", {"image": _text(rng)}, _text(rng)])
    if rng.random() < 0.15:
        job["services"] = {
            "db": {"image": _text(rng), "env": {"P": _text(rng)}, "ports": [_text(rng)]}
        }
    if rng.random() < 0.15 and jobs:
        job["needs"] = rng.choice(jobs)
    if rng.random() < 0.1:
        return {
            "uses": "./.github/workflows/w0.yml",
            "with": {"x": _text(rng)},
            "strategy": job.get("strategy"),
        }
    return job


def _workflow(rng: random.Random) -> str:
    if rng.random() < 0.05:
        return rng.choice(["jobs: [unclosed", "- just\n- a list\n", "on: push\n", ""])
    jobs: dict[str, Any] = {}
    for n in range(rng.randrange(1, 4)):
        jobs[f"job{n}"] = _job(rng, list(jobs))
    document: dict[str, Any] = {
        "on": {"pull_request": None, "workflow_call": {"inputs": {"x": {"type": "string"}}}},
        "jobs": jobs,
    }
    if rng.random() < 0.3:
        document["env"] = {"GLOBAL": _text(rng)}
    return yaml.safe_dump(document, sort_keys=False)


def _lines(rng: random.Random, repo: str, commit: str, workflows: dict[str, str]) -> list[str]:
    lines = []
    for n, (path, text) in enumerate(workflows.items()):
        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError:
            document = None
        jobs = document.get("jobs") if isinstance(document, dict) else None
        names: list[Any] = [["no such job", path]]
        if isinstance(jobs, dict):
            for job_id, job in jobs.items():
                name = job.get("name", job_id) if isinstance(job, dict) else job_id
                names.append([str(name), path])
                names.append(f"{job_id} (ubuntu, ubuntu-22.04)")
        for m, name in enumerate(names):
            record = {
                "instance_id": f"fuzz__{Path(repo).stem}-{n}{m:02d}",
                "repo": repo,
                "base_commit": commit,
                "language": rng.choice(["python", "go", "rust", "cpp"]),
                # with a gold patch, legs are ranked by whether they reach it, and every
                # workflow's legs are weighed when none does; without, only the listed ones
                "patch": rng.choice([PYTHON.fix, ""]),
                "ci_name_list": rng.choice([[name], [name, "other"], []]),
            }
            lines.append(json.dumps(record))
    return lines


def test_no_workflow_shape_makes_a_line_escape_as_an_error(
    make_repo: MakeRepo, ci_settings: CISettings
) -> None:
    rng = random.Random(20261206)
    workspaces = Workspaces(ci_settings.mirrors_dir, ci_settings.runs_dir)
    total = imported = 0
    categories: set[str] = set()
    for _ in range(10):
        workflows = {f".github/workflows/w{n}.yml": _workflow(rng) for n in range(8)}
        repo, commit = make_repo({**PYTHON.files, **workflows})
        lines = _lines(rng, repo, commit, workflows)
        report = import_lines(lines, workspaces)
        refused = {e.line for e in report.errors}
        assert len(refused) + len(report.tasks) == len(lines)  # every line has an outcome
        faults = [str(e) for e in report.errors if e.reason == ARENA_FAULT]
        assert not faults, faults[:3]
        total += len(lines)
        imported += len(report.tasks)
        categories |= {e.reason for e in report.errors}
    # the fuzz reaches both outcomes, so it exercises derivation and not just the first check
    assert total > 300 and imported > 20 and len(categories) >= 2, (total, imported, categories)


class _BrokenReads(Workspaces):
    """A workspace whose reads raise what no caller expects, for one repo only."""

    def __init__(self, broken: str, settings: CISettings) -> None:
        super().__init__(settings.mirrors_dir, settings.runs_dir)
        self._broken = broken

    def read_files(self, source: str, commit: str, directory: str) -> dict[str, str]:
        if source == self._broken:
            raise RuntimeError("a fault in Arena's own code")
        return super().read_files(source, commit, directory)


def test_a_fault_in_arenas_code_refuses_that_line_only_and_says_so(
    make_repo: MakeRepo, ci_settings: CISettings
) -> None:
    workflow = (
        "jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: python -m pytest\n"
    )
    good, good_commit = make_repo({**PYTHON.files, ".github/workflows/ci.yml": workflow})
    bad, bad_commit = make_repo({**PYTHON.files, ".github/workflows/ci.yml": workflow})
    record = {"language": "python", "patch": PYTHON.fix, "ci_name_list": ["test"]}
    lines = [
        json.dumps({**record, "instance_id": "a-1", "repo": good, "base_commit": good_commit}),
        json.dumps({**record, "instance_id": "b-1", "repo": bad, "base_commit": bad_commit}),
        json.dumps({**record, "instance_id": "a-2", "repo": good, "base_commit": good_commit}),
    ]
    report = import_lines(lines, _BrokenReads(bad, ci_settings))
    assert [t.instance_id for t in report.tasks] == ["a-1", "a-2"]
    [error] = report.errors
    assert (error.line, error.reason) == (2, ARENA_FAULT)
    assert "RuntimeError: a fault in Arena's own code" in error.message
