"""Legs of the eight real SwingArena instances, ranked from their repos' own workflows."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable

import pytest

from arena.tasks.schema import job_refs
from ci_runner.workflows import DerivedJobs, Refusal, UnsupportedJob, derive_pipelines
from tests.shared_data import bundle_mirror, shared_data

REAL = shared_data() / "swingarena-real"
pytestmark = pytest.mark.skipif(not REAL.is_dir(), reason=f"{REAL} is not here")


def _lines() -> dict[str, tuple[str, dict[str, object]]]:
    out = {}
    for path in sorted(REAL.glob("*_filtered_instance_list.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            out[str(record["instance_id"])] = (path.name.split("_")[0], record)
    return out


def _derive(instance: str) -> DerivedJobs:
    language, record = _lines()[instance]
    repo = str(record["repo"])
    mirror = bundle_mirror(REAL / f"{repo.replace('/', '+')}.bundle")

    def show(path: str) -> str | None:
        done = subprocess.run(
            ["git", f"--git-dir={mirror}", "show", f"base:{path}"], capture_output=True, text=True
        )
        return done.stdout if done.returncode == 0 else None

    names = subprocess.run(
        ["git", f"--git-dir={mirror}", "ls-tree", "--name-only", "base", ".github/workflows/"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    workflows = {n: show(n) or "" for n in names if n.endswith((".yml", ".yaml"))}
    read: Callable[[str], str | None] = show
    github = {"repository": repo, "repository_owner": repo.split("/")[0], "sha": "0" * 40}
    return derive_pipelines(
        workflows, job_refs(record["ci_name_list"]), language, read_file=read, github=github
    )


def _ranked(derived: DerivedJobs) -> list[str]:
    return [
        r.leg
        for r in sorted(derived.considered, key=lambda r: 99 if r.rank is None else r.rank)
        if r.rank is not None
    ]


def test_raft_plain_test_legs_rank_above_compat_and_32_bit_legs() -> None:
    ranked = _ranked(_derive("hashicorp__raft-605"))
    assert ranked[:2] == ["go-test (1.20, x64)", "go-test (1.19, x64)"]
    assert set(ranked[2:]) >= {"go-test-compat (1.22, x32)", "go-test (1.20, x32)"}


def test_timeline_logger_test_suite_first_and_publish_kept_last_despite_its_if() -> None:
    derived = _derive("maykinmedia__django-timeline-logger-29")
    ranked = _ranked(derived)
    # the listed legs first, then their job's other matrix legs, then the code-quality legs
    suites = [n for n, leg in enumerate(ranked) if leg.startswith("Run the test suite")]
    assert suites == list(range(len(suites))) and len(suites) >= 2
    assert {ranked[0], ranked[1]} == {
        "Run the test suite (Python 3.12, Django 3.2)",
        "Run the test suite (Python 3.10, Django 4.2)",
    }
    publish = next(r for r in derived.considered if r.leg == "Publish package to PyPI")
    assert "release" in publish.why and "if:" not in publish.why


def test_nox_linux_build_legs_need_conda() -> None:
    with pytest.raises(UnsupportedJob) as raised:
        _derive("wntrblm__nox-804")
    assert raised.value.reason == Refusal.CONDA


def test_chainlit_pytest_legs_come_through_the_reusable_workflow_and_composite_action() -> None:
    derived = _derive("Chainlit__chainlit-1418")
    assert derived.best.leg.startswith("pytest (3.12") and derived.best.workflow_file.endswith(
        "pytest.yaml"
    )
    setup = [s.run for s in derived.best.pipeline.setup]
    assert "pipx install 'poetry==1.8.3'" in setup
    assert derived.best.pipeline.steps[-1].run == "poetry run pytest --cov=chainlit/"
    # pnpm/action-setup in the pnpm-node-install action: pnpm for `pnpm install`, `buildUi`
    assert setup.index("npm install -g pnpm@9.7.0") < setup.index(
        "pnpm install --no-frozen-lockfile"
    )
    assert "pnpm run buildUi" in [s.run for s in derived.best.pipeline.steps]
    mypy = next(r for r in derived.considered if r.leg == "mypy")
    assert "type-check" in mypy.why


def test_jobbergate_make_qa_legs_are_candidates_and_docker_compose_is_refused() -> None:
    derived = _derive("omnivector-solutions__jobbergate-517")
    assert set(_ranked(derived)) == {"jobbergate-cli tests", "jobbergate-core tests"}
    api = next(r for r in derived.considered if r.leg == "jobbergate-api tests")
    assert not api.kept and api.category == Refusal.DOCKER


def test_power_grid_model_linux_cpp_legs_first_with_links_in_setup() -> None:
    derived = _derive("PowerGridModel__power-grid-model-718")
    assert all(leg.startswith("build-cpp-test-linux") for leg in _ranked(derived)[:2])
    pipeline = derived.best.pipeline
    assert any("ln -s /usr/bin/clang-15" in s.run for s in pipeline.setup)
    assert not any("ln -s" in s.run or "brew" in s.run for s in pipeline.steps)


def test_fzf_build_runs_unit_and_integration_tests_and_codeql_is_not_a_candidate() -> None:
    derived = _derive("junegunn__fzf-4112")
    assert _ranked(derived) == ["build"]
    steps = [s.run for s in derived.best.pipeline.steps]
    assert "make test" in steps and any("ruby test/test_go.rb" in s for s in steps)
    assert derived.best.pipeline.report.step == "Unit test"
    # `make test` runs go test out of sight: -v through GOFLAGS, so its lines can be read
    assert derived.best.pipeline.env["GOFLAGS"] == "-v"


def test_imap_codec_linux_test_leg_ranks_over_minimal_versions_audit_and_fuzz() -> None:
    derived = _derive("duesee__imap-codec-561")
    ranked = _ranked(derived)
    assert ranked[0] == "test (ubuntu-latest)"
    # `just bindings` runs `python -m unittest -v`, whose lines the console fallback reads
    bindings = next(c for c in derived.candidates if c.leg == "bindings")
    assert [s.run for s in bindings.pipeline.steps] == ["just bindings"]
    assert any("python -m unittest (in justfile: just bindings)" in n for n in bindings.notes)
    assert ranked.index("minimal_versions") < ranked.index("fuzz")
    assert ranked.index("bindings") < ranked.index("minimal_versions") < ranked.index("audit")
