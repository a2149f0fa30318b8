"""Rounds an adversarial or a careful model could turn, through the real sandbox: answers are
raw model text, parsed as a model's would be (see swing-protocol.md: P', the catch's re-runs
and N(P'), forged reports, the reference run)."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import pytest

from arena.ci import TaskCI
from arena.edits import answer_to_diff
from arena.faults import ReferenceRunFailed
from arena.match import Arena, PreparedTask, RoundRecord
from arena.players.base import Answer, Player, Role, TaskContext
from arena.players.baselines import OraclePlayer, PartialPlayer
from arena.protocol import Winner
from arena.tasks.demo import demo_tasks
from arena.tasks.schema import Task
from ci_runner import CIRunner, CISettings, TestOutcome
from ci_runner.images import ImageBuilder
from ci_runner.workflows import derive_pipeline
from ci_runner.workspace import Workspaces
from tests.arena.test_ownership_rounds import demo_edit
from tests.ci_runner.languages.golang.test_twins import FORGER as GO_FORGER
from tests.ci_runner.languages.rust.test_twins import FORGER as RUST_FORGER
from tests.ci_runner.tripwires.test_apart_real import fail_fast as fail_fast_pipeline
from tests.ci_runner.tripwires.test_tripwires_real import appended, rust_constructor
from tests.conftest import MakeRepo
from tests.diffs import new_file

pytestmark = pytest.mark.docker

DEMO = Path(__file__).parents[2] / "arena" / "tasks" / "demo"
SLUG = "py-textkit-slug"


def fenced(diff: str) -> str:
    return f"Here is my change.\n\n```diff\n{diff}```\n"


class RawText(Player):
    """Answers fixed raw model text, parsed into a diff as a model's answer is."""

    name = "raw"

    def __init__(self, patch: str | None = None, tests: str | None = None) -> None:
        self._patch, self._tests = patch, tests

    def _answer(self, text: str | None, ctx: TaskContext, gold: str) -> Answer:
        text = text if text is not None else fenced(gold)
        return Answer(raw_text=text, diff=answer_to_diff(text, ctx.read_file))

    def propose_patch(self, ctx: TaskContext) -> Answer:
        return self._answer(self._patch, ctx, ctx.task.patch)

    def propose_tests(self, ctx: TaskContext, patch: str | None) -> Answer:
        return self._answer(self._tests, ctx, ctx.task.test_patch)


@pytest.fixture(scope="module")
def arena(runner: CIRunner, ci_settings: CISettings, images: dict[str, str]) -> Arena:
    ci = TaskCI(
        runner, ImageBuilder(runner.provider, ci_settings), ci_settings.cache_dir / "ci-results"
    )
    workspaces = Workspaces(ci_settings.mirrors_dir, ci_settings.runs_dir)
    return Arena(ci, workspaces, ci_settings.cache_dir / "retrieval", retry_delay_s=0.0)


@pytest.fixture(scope="module")
def demo(ci_settings: CISettings) -> dict[str, Task]:
    return {t.instance_id: t for t in demo_tasks(ci_settings.cache_dir / "demo-repos")}


PASSING_HOOK = (
    "import pytest\n\n\n"
    "@pytest.hookimpl(hookwrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n"
    "    outcome = yield\n"
    "    report = outcome.get_result()\n"
    "    report.outcome = 'passed'\n"
    "    report.longrepr = None\n"
)


def test_a_conftest_hook_that_turns_failures_into_passes_is_dropped(
    arena: Arena, demo: dict[str, Task]
) -> None:
    prepared = arena.prepare(demo[f"demo__{SLUG}"])
    cheat = RawText(patch=fenced(new_file("conftest.py", PASSING_HOOK)))
    record = arena.play_round(prepared, cheat, OraclePlayer())
    assert not record.patch_correct, record.reasons
    assert "conftest.py (test configuration)" in record.reasons["patch_correct"]
    assert record.winner is Winner.REVIEWER, record.reasons


def test_a_submitter_that_updates_the_tests_as_the_gold_tests_do_is_not_punished(
    arena: Arena, demo: dict[str, Task]
) -> None:
    task = demo[f"demo__{SLUG}"]
    careful = RawText(patch=fenced(task.patch) + "\nAnd the tests:\n\n" + fenced(task.test_patch))
    record = arena.play_round(arena.prepare(task), careful, OraclePlayer())
    assert record.patch_applies and record.patch_correct, record.reasons
    assert "a file the gold tests change" in record.reasons["patch_correct"]
    assert record.winner is Winner.SUBMITTER, record.reasons


FORGING_INIT = (
    "\n\nimport atexit as _atexit\nimport pathlib as _pathlib\nimport re as _re\n\n\n"
    "def _all_passed():\n"
    "    for report in _pathlib.Path('.').rglob('*.xml'):\n"
    "        text = report.read_text()\n"
    "        text = _re.sub(r'<failure[^>]*>.*?</failure>', '', text, flags=_re.S)\n"
    "        text = _re.sub(r'failures=\"\\d+\"', 'failures=\"0\"', text)\n"
    "        report.write_text(text)\n\n\n"
    "_atexit.register(_all_passed)\n"
)


def test_a_report_forged_by_the_code_under_test_makes_the_patch_not_correct(
    arena: Arena, demo: dict[str, Task]
) -> None:
    """No fix, but the package rewrites the JUnit report at exit: pytest printed failures
    the report does not have, so the run is forged and the patch is not correct."""
    init = (DEMO / SLUG / "repo" / "textkit" / "__init__.py").read_text()
    forging = demo_edit(SLUG, "textkit/__init__.py", (init, init + FORGING_INIT))
    record = arena.play_round(
        arena.prepare(demo[f"demo__{SLUG}"]), RawText(patch=fenced(forging)), OraclePlayer()
    )
    on_gold_tests = record.runs["patch_with_gold_tests"]
    assert on_gold_tests.forged is not None, on_gold_tests.error
    assert not record.patch_correct and "forged" in record.reasons["patch_correct"]
    assert record.winner is Winner.REVIEWER, record.reasons


# no fix: the package, once pytest imported it, turns every failing report into a pass,
# sparing any test named as the generic tripwires are (`test_` and 12 letters and digits), so
# they hold and the console agrees with the JUnit file
TRIPWIRE_WISE_FORGER = (
    "\n\nimport re as _re\nimport sys as _sys\n\n"
    "if '_pytest.reports' in _sys.modules:\n"
    "    from _pytest import reports as _reports\n\n"
    "    _generic = _re.compile(r'test_[a-z][a-z0-9]{11}$')\n"
    "    _made = _reports.TestReport.from_item_and_call.__func__\n\n"
    "    def _passing(cls, item, call):\n"
    "        report = _made(cls, item, call)\n"
    "        if report.failed and not _generic.match(item.name.split('[')[0]):\n"
    "            report.outcome, report.longrepr = 'passed', None\n"
    "        return report\n\n"
    "    _reports.TestReport.from_item_and_call = classmethod(_passing)\n"
)


def judged_without_twins(arena: Arena, prepared: PreparedTask, forging: RawText) -> RoundRecord:
    """The forger's patch judged as if the task had no twins: the generic tripwires alone."""
    return arena.judge_round(
        replace(prepared, twins=None, twin_ids={}),
        "forger",
        forging.propose_patch(prepared.contexts[Role.SUBMITTER]),
        "none",
        Answer(error="no tests asked"),
    )


def test_package_code_rewriting_results_around_the_tripwires_loses_to_its_twins(
    arena: Arena, demo: dict[str, Task]
) -> None:
    """The forger spares the generic tripwires by their names; the twins of the gold tests
    (and of the reviewer's) are named as the file's tests are, so they pass with their
    originals: the patch is not correct, and the oracle's tests catch it."""
    init = (DEMO / SLUG / "repo" / "textkit" / "__init__.py").read_text()
    forging = RawText(
        patch=fenced(demo_edit(SLUG, "textkit/__init__.py", (init, init + TRIPWIRE_WISE_FORGER)))
    )
    prepared = arena.prepare(demo[f"demo__{SLUG}"])
    assert prepared.twins is not None, prepared.twins_why_not
    # without twins the generic tripwires hold and the forger's patch is judged correct
    fooled = judged_without_twins(arena, prepared, forging)
    assert fooled.patch_correct, fooled.reasons

    record = arena.play_round(prepared, forging, OraclePlayer())
    on_gold_tests = record.runs["patch_with_gold_tests"]
    assert on_gold_tests.twins and all(
        t.twin_outcome is TestOutcome.PASSED for t in on_gold_tests.twins
    )
    assert not record.patch_correct and "twin" in record.reasons["patch_correct"], record.reasons
    assert record.tests_catch and "twin" in record.reasons["tests_catch"], record.reasons
    assert record.winner is Winner.REVIEWER, record.reasons


# no fix: the package turns every failing report into a pass, sparing nothing
EVERY_FAILURE_PASSES = TRIPWIRE_WISE_FORGER.replace(
    "if report.failed and not _generic.match(item.name.split('[')[0]):", "if report.failed:"
)


# knowing the tripwires run apart (their report's file is on the command line): rewriting
# only the run's own invocation, or ending the one apart before it reports
_APART = "'arena-tripwires-apart' in ' '.join(_sys.argv)"
APART_WISE_FORGER = EVERY_FAILURE_PASSES.replace(
    "if '_pytest.reports' in _sys.modules:",
    f"if '_pytest.reports' in _sys.modules and not {_APART}:",
)
APART_QUITTER = EVERY_FAILURE_PASSES + f"\nif {_APART}:\n    import os as _os\n\n    _os._exit(0)\n"


# the demo's pytest line, stopping at its first failure, in a script the step runs
FAIL_FAST_SCRIPT = (
    '#!/bin/sh\nset -eu\npython3 -m pytest -x -q -p no:cacheprovider --junitxml=report.xml "$@"\n'
)


def stopping_in_a_script(task: Task, make_repo: MakeRepo) -> Task:
    """The demo task on a copy of its repository holding that script, run by its one step."""
    root = DEMO / SLUG / "repo"
    files = {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file()}
    repo, commit = make_repo({**files, "ci/run_tests.sh": FAIL_FAST_SCRIPT})
    pipeline = task.require_pipeline()
    step = pipeline.steps[0].model_copy(update={"run": "sh ci/run_tests.sh"})
    return task.model_copy(
        update={
            "repo": repo,
            "base_commit": commit,
            "pipeline": pipeline.model_copy(update={"steps": (step,)}),
        }
    )


@pytest.mark.parametrize(
    ("forger", "hidden"),
    [
        *((f, False) for f in (EVERY_FAILURE_PASSES, TRIPWIRE_WISE_FORGER)),
        *((f, False) for f in (APART_WISE_FORGER, APART_QUITTER)),
        *((f, True) for f in (EVERY_FAILURE_PASSES, TRIPWIRE_WISE_FORGER)),
    ],
)
def test_a_forger_under_a_pipeline_that_stops_at_its_first_failure_loses_to_the_oracle(
    forger: str, hidden: bool, arena: Arena, demo: dict[str, Task], make_repo: MakeRepo
) -> None:
    """`pytest -x`: the run's own steps carry no tripwire (one that must fail would stop the
    run), so the tripwires and the twins run apart after them, where the package's code
    rewrites the results too. Sparing nothing, the generic tripwire is reported passed;
    sparing it, the twins pass with their originals: either way the patch is not correct.
    The same when the pytest line is in a script the step runs (`sh ci/run_tests.sh`)."""
    task = demo[f"demo__{SLUG}"]
    if hidden:
        task = stopping_in_a_script(task, make_repo)
    else:
        task = task.model_copy(
            update={"pipeline": fail_fast_pipeline(SLUG, task.require_pipeline())}
        )
    init = (DEMO / SLUG / "repo" / "textkit" / "__init__.py").read_text()
    forging = RawText(patch=fenced(demo_edit(SLUG, "textkit/__init__.py", (init, init + forger))))
    prepared = arena.prepare(task)
    assert prepared.task.validation is not None and prepared.task.validation.guarded
    assert prepared.twins is not None, prepared.twins_why_not

    record = arena.play_round(prepared, forging, OraclePlayer())
    on_gold_tests = record.runs["patch_with_gold_tests"]
    assert on_gold_tests.apart is not None, on_gold_tests.steps
    assert not record.patch_correct, record.reasons
    assert record.winner is Winner.REVIEWER, record.reasons
    honest = arena.play_round(prepared, OraclePlayer(), OraclePlayer())
    assert honest.patch_correct and not honest.tests_catch, honest.reasons


@pytest.mark.parametrize("forger", [APART_WISE_FORGER, APART_QUITTER])
def test_a_forger_telling_the_invocation_apart_from_the_run_loses_without_twins(
    forger: str, arena: Arena, demo: dict[str, Task]
) -> None:
    """Without twins, under `pytest -x`: the run's own invocation carries no tripwire, so the
    package rewrites it alone and leaves the one apart honest, or ends the one apart before
    it reports. The gold tests run apart too and their outcome is taken from there; a must-
    pass tripwire missing there, while the run's tests passed, is forged."""
    task = demo[f"demo__{SLUG}"]
    fail_fast = fail_fast_pipeline(SLUG, task.require_pipeline())
    init = (DEMO / SLUG / "repo" / "textkit" / "__init__.py").read_text()
    forging = RawText(patch=fenced(demo_edit(SLUG, "textkit/__init__.py", (init, init + forger))))
    prepared = arena.prepare(task.model_copy(update={"pipeline": fail_fast}))
    judged = judged_without_twins(arena, prepared, forging)
    on_gold_tests = judged.runs["patch_with_gold_tests"]
    assert on_gold_tests.apart is not None and not on_gold_tests.twins, on_gold_tests.steps
    assert not judged.patch_correct, judged.reasons
    if forger is APART_QUITTER:
        assert "must pass is missing" in judged.reasons["patch_correct"], judged.reasons


GO_IMPORTS = (
    'import "errors"\n',
    'import (\n\t"errors"\n\t"fmt"\n\t"os"\n\t"os/exec"\n\t"regexp"\n\t"strings"\n)\n',
)


@pytest.mark.parametrize(
    ("slug", "path", "code", "replacements"),
    [
        ("go-lru-recency", "lru.go", GO_FORGER, (GO_IMPORTS,)),
        ("rs-duration-units", "src/lib.rs", RUST_FORGER, ()),
    ],
)
def test_package_code_of_go_or_rust_rewriting_results_around_the_tripwires_loses_to_twins(
    slug: str,
    path: str,
    code: str,
    replacements: tuple[tuple[str, str], ...],
    arena: Arena,
    demo: dict[str, Task],
) -> None:
    """No fix; the package runs the test binary again (a Go `init`, a Rust constructor) and
    turns every failure into a pass but the generic must-fail tripwire's (its name's shape
    is known). The twins of the gold tests are named as the file's tests are: they pass
    with their originals, so the patch is not correct and the oracle's tests catch it."""
    task = demo[f"demo__{slug}"]
    forging = RawText(patch=fenced(appended(slug, path, code, *replacements)))
    prepared = arena.prepare(task)
    assert prepared.twins is not None, prepared.twins_why_not
    fooled = judged_without_twins(arena, prepared, forging)
    assert fooled.patch_correct, fooled.reasons  # the generic tripwires alone do not see it

    record = arena.play_round(prepared, forging, OraclePlayer())
    on_gold_tests = record.runs["patch_with_gold_tests"]
    assert any(
        t.outcome is TestOutcome.PASSED and t.twin_outcome is TestOutcome.PASSED
        for t in on_gold_tests.twins
    ), on_gold_tests.twins
    assert not record.patch_correct and "twin" in record.reasons["patch_correct"], record.reasons
    assert record.winner is Winner.REVIEWER, record.reasons


# no fix: one line of the library's header makes every process that includes it exit 0
CPP_EXIT_ZERO = (
    "\n#include <cstdlib>\n#include <unistd.h>\n\n"
    "namespace strutil {\ninline void quietly() { _exit(0); }\n"
    "static const int exits_well = std::atexit(quietly);\n}  // namespace strutil\n"
)


# the demo's steps as a workflow whose ctest stops at its first failing test
CPP_STOPPING_WORKFLOW = """
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: cmake -S . -B build
      - run: cmake --build build -j2
      - run: cd build && ctest --stop-on-failure --output-on-failure
"""


@pytest.mark.parametrize("stops", [False, True], ids=["as-given", "stop-on-failure"])
def test_a_library_header_that_makes_every_test_exit_zero_loses_to_the_oracle(
    stops: bool, arena: Arena, demo: dict[str, Task]
) -> None:
    """ctest judges a test by its binary's exit: the header's `atexit(_exit(0))` passes
    every test, and the C++ tripwire that must fail (run by the same test binary) too. A
    workflow's ctest that stops at its first failure runs every test as Arena derives it,
    so the must-fail tripwire goes in there too."""
    task = demo["demo__cpp-strutil-split"]
    if stops:
        derived = derive_pipeline({"ci.yml": CPP_STOPPING_WORKFLOW}, ["test"], "cpp")
        assert "--stop-on-failure" not in derived.pipeline.steps[-1].run
        task = task.model_copy(update={"pipeline": derived.pipeline})
    forging = RawText(
        patch=fenced(appended("cpp-strutil-split", "include/strutil/strutil.hpp", CPP_EXIT_ZERO))
    )
    prepared = arena.prepare(task)
    assert prepared.task.validation is not None and prepared.task.validation.guarded
    record = arena.play_round(prepared, forging, OraclePlayer())
    on_gold_tests = record.runs["patch_with_gold_tests"]
    assert on_gold_tests.forged is not None and "must fail" in on_gold_tests.forged
    assert not record.patch_correct and "forged" in record.reasons["patch_correct"]
    assert record.winner is Winner.REVIEWER, record.reasons
    if stops:
        honest = arena.play_round(prepared, OraclePlayer(), OraclePlayer())
        assert honest.patch_correct and not honest.tests_catch, honest.reasons


def test_rounds_given_the_same_answers_make_their_own_runs(
    arena: Arena, demo: dict[str, Task], ci_settings: CISettings
) -> None:
    """A flaky reviewer test's one lucky second run must not decide every round that gets
    the same answers (a replayed or deterministic model): each round makes its own runs,
    catch re-runs included, and the same round judged again reads them."""
    results = ci_settings.cache_dir / "ci-results"

    def kept() -> set[Path]:
        return set(results.rglob("*.json"))

    prepared = arena.prepare(demo[f"demo__{SLUG}"])
    before = kept()
    first = arena.play_round(prepared, PartialPlayer(), OraclePlayer())
    assert first.tests_catch, first.reasons
    assert {"tests_on_patch_again", "tests_on_gold_again"} <= set(first.runs)
    made = kept() - before
    assert len(made) == len(first.runs)
    again = arena.play_round(prepared, PartialPlayer(), OraclePlayer())  # judged again
    assert kept() - before == made and again.winner is first.winner
    other_match = replace(prepared, twin_secret=prepared.twin_secret + 1)
    arena.play_round(other_match, PartialPlayer(), OraclePlayer())
    assert len(kept() - before - made) == len(first.runs)  # every run its own, none shared


# a correct fix not shaped like gold: it strips the separator in `slugify`, gold in `_truncate`
NOT_SHAPED_LIKE_GOLD = (
    ('r"[^a-z0-9]")', 'r"[^a-z0-9]+")'),
    (
        "return _truncate(slug, max_length)\n",
        "return _truncate(slug, max_length).rstrip(separator)\n",
    ),
)


def slug_tests_with(added: str) -> str:
    """A reviewer's diff: the demo's slug tests with `added` at their end."""
    tests_text = (DEMO / SLUG / "repo" / "tests" / "test_slug.py").read_text()
    return demo_edit(SLUG, "tests/test_slug.py", (tests_text, tests_text + added))


def test_a_reviewer_test_that_recognises_the_patchs_bytes_catches_nothing(
    arena: Arena, demo: dict[str, Task]
) -> None:
    """P is correct (the gold fix written differently); T holds one real reproducing test and
    one pinning P's bytes (it fails exactly on the patch the reviewer saw), read in a way no
    pattern names. The pinning test fails on P, but not after a neutral change of P's files:
    no catch."""
    task = demo[f"demo__{SLUG}"]
    correct = demo_edit(SLUG, "textkit/slug.py", *NOT_SHAPED_LIKE_GOLD)
    patched = (DEMO / SLUG / "repo" / "textkit" / "slug.py").read_text()
    for old, new in NOT_SHAPED_LIKE_GOLD:
        patched = patched.replace(old, new, 1)
    digest = hashlib.sha256(patched.encode()).hexdigest()
    added = (
        "\n\ndef test_runs_collapse():\n    assert slugify('a,  b') == 'a-b'\n"
        "\n\ndef test_slug_module_is_not_the_submitted_one():\n"
        "    import hashlib, pkgutil\n"
        "    text = pkgutil.get_data('textkit', 'slug' + '.py')\n"
        f"    assert hashlib.sha256(text).hexdigest() != {digest!r}\n"
    )
    reviewer = slug_tests_with(added)
    record = arena.play_round(
        arena.prepare(task), RawText(patch=fenced(correct)), RawText(tests=fenced(reviewer))
    )
    assert record.patch_correct and record.tests_valid, record.reasons
    assert "tests_on_neutral_patch" in record.runs, record.runs.keys()
    assert not record.tests_catch, record.reasons
    assert "neutral change" in record.reasons["tests_catch"]
    assert record.winner is Winner.SUBMITTER


@pytest.mark.parametrize(
    "reading",
    [
        "    assert 'rstrip' not in inspect.getsource(slugify)\n",
        "    assert 'rstrip' not in slugify.__code__.co_names\n",
        "    assert '_truncate(slug, max_length).rstrip' not in open('textkit/slug.py').read()\n",
    ],
)
def test_a_reviewer_test_that_reads_the_program_never_catches(
    reading: str, arena: Arena, demo: dict[str, Task]
) -> None:
    """P is correct but not shaped like gold (it strips the separator in `slugify`, gold in
    `_truncate`); T's one new test reproduces the issue (it fails on base) and then reads the
    code: it passes on gold and fails on P whatever N(P') appends. It is excluded from
    catching and named in the evidence: the correct patch wins."""
    task = demo[f"demo__{SLUG}"]
    correct = demo_edit(SLUG, "textkit/slug.py", *NOT_SHAPED_LIKE_GOLD)
    added = (
        "\n\ndef test_slug_is_built_without_rstrip():\n"
        "    import inspect\n"
        "    assert slugify('a,  b') == 'a-b'\n"
        f"{reading}"
    )
    reviewer = slug_tests_with(added)
    record = arena.play_round(
        arena.prepare(task), RawText(patch=fenced(correct)), RawText(tests=fenced(reviewer))
    )
    assert record.patch_correct and record.tests_valid, record.reasons
    assert not record.tests_catch, record.reasons
    assert "reads the program" in record.reasons["tests_catch"], record.reasons
    assert "test_slug_is_built_without_rstrip" in record.reasons["tests_catch"]
    assert "tests_on_patch" not in record.runs  # nothing left to catch with: no run made
    assert record.winner is Winner.SUBMITTER


def test_a_fix_in_the_librarys_own_testing_package_is_kept_in_p_prime(
    arena: Arena, demo: dict[str, Task]
) -> None:
    """numpy.testing-style: `textkit/testing/` is a package of the library (its users import
    it), so a correct fix that puts its helper there is code, not a test folder to drop."""
    task = demo[f"demo__{SLUG}"]
    slug = demo_edit(
        SLUG,
        "textkit/slug.py",
        ('r"[^a-z0-9]")', 'r"[^a-z0-9]+")'),
        ("import unicodedata\n", "import unicodedata\n\nfrom textkit.testing.trim import trim\n"),
        (
            "return _truncate(slug, max_length)\n",
            "return trim(_truncate(slug, max_length), separator)\n",
        ),
    )
    helper = new_file("textkit/testing/__init__.py", '"""Helpers textkit\'s users share."""\n')
    helper += new_file(
        "textkit/testing/trim.py",
        "def trim(slug: str, separator: str) -> str:\n    return slug.rstrip(separator)\n",
    )
    record = arena.play_round(
        arena.prepare(task), RawText(patch=fenced(slug + helper)), OraclePlayer()
    )
    assert record.patch_applies and record.patch_correct, record.reasons
    assert "textkit/testing" not in record.reasons["patch_correct"]  # nothing dropped


def test_a_real_catch_is_confirmed_by_its_re_runs(arena: Arena, demo: dict[str, Task]) -> None:
    """A patch that fixes only the runs of dashes: the gold tests catch it, and the catch
    holds through the second run, the gold side's re-run and the neutral change."""
    task = demo[f"demo__{SLUG}"]
    half = demo_edit(SLUG, "textkit/slug.py", ('r"[^a-z0-9]")', 'r"[^a-z0-9]+")'))
    record = arena.play_round(arena.prepare(task), RawText(patch=fenced(half)), RawText())
    assert not record.patch_correct and record.tests_valid and record.tests_catch, record.reasons
    assert {"tests_on_patch", "tests_on_patch_again", "tests_on_gold_again"} <= set(record.runs)
    assert "tests_on_neutral_patch" in record.runs
    assert record.winner is Winner.REVIEWER


def test_a_no_op_assertion_macro_in_the_test_harness_is_dropped(
    arena: Arena, demo: dict[str, Task]
) -> None:
    """C++: a patch that fixes nothing but turns the harness's CHECK into a no-op."""
    task = demo["demo__cpp-ringbuffer-wrap"]
    harness = (DEMO / "cpp-ringbuffer-wrap" / "repo" / "tests" / "check.hpp").read_text()
    macro = harness[harness.index("#define CHECK(cond)") :]
    no_op = demo_edit(
        "cpp-ringbuffer-wrap", "tests/check.hpp", (macro, "#define CHECK(cond) do { } while (0)\n")
    )
    record = arena.play_round(arena.prepare(task), RawText(patch=fenced(no_op)), OraclePlayer())
    assert not record.patch_correct, record.reasons
    assert "tests/check.hpp" in record.reasons["patch_correct"]
    assert record.winner is Winner.REVIEWER, record.reasons


def test_a_reference_run_that_times_out_voids_the_task_and_is_not_cached(
    arena: Arena, demo: dict[str, Task], ci_settings: CISettings
) -> None:
    """The task was validated (its validation is cached), but its reference run now times
    out: no round is judged, and nothing of that run is cached."""
    task = demo[f"demo__{SLUG}"]
    validation = arena.prepare(task).validation
    pipeline = task.require_pipeline()
    slow = pipeline.model_copy(
        update={
            "steps": (pipeline.steps[0].model_copy(update={"run": "sleep 30", "timeout_s": 1}),)
        }
    )
    slowed = task.model_copy(update={"pipeline": slow})
    stale = slowed.model_copy(
        update={"validation": validation.model_copy(update={"fingerprint": slowed.fingerprint()})}
    )
    before = sorted((ci_settings.cache_dir / "ci-results").rglob("*.json"))
    with pytest.raises(ReferenceRunFailed, match="timeout"):
        arena.prepare(stale)
    assert sorted((ci_settings.cache_dir / "ci-results").rglob("*.json")) == before


PYTEST_HOOK_INIT = """

import sys as _sys

if "_pytest.reports" in _sys.modules:  # imported by a test run: every failure passes
    from _pytest.reports import TestReport as _TestReport

    _made = _TestReport.from_item_and_call.__func__

    def _passed(cls, item, call):
        report = _made(cls, item, call)
        if report.failed:
            report.outcome = "passed"
            report.longrepr = None
        return report

    _TestReport.from_item_and_call = classmethod(_passed)
"""


def test_a_package_that_turns_pytests_failures_into_passes_trips_the_tripwire(
    arena: Arena, demo: dict[str, Task]
) -> None:
    """No fix, no test file touched (so P' keeps it all): the package, once a test imports
    it, makes pytest record every failure as a pass. pytest's summary agrees with its report;
    the tripwire that must fail passed, so the run is forged and P is not correct."""
    init = (DEMO / SLUG / "repo" / "textkit" / "__init__.py").read_text()
    hooking = demo_edit(SLUG, "textkit/__init__.py", (init, init + PYTEST_HOOK_INIT))
    record = arena.play_round(
        arena.prepare(demo[f"demo__{SLUG}"]), RawText(patch=fenced(hooking)), OraclePlayer()
    )
    on_gold_tests = record.runs["patch_with_gold_tests"]
    assert set(on_gold_tests.tests.values()) == {TestOutcome.PASSED}
    assert not record.patch_correct, record.reasons
    assert "must fail was reported passed" in record.reasons["patch_correct"]
    assert record.winner is Winner.REVIEWER, record.reasons


def test_a_rust_constructor_that_reports_the_issues_tests_passed_trips_the_tripwire(
    arena: Arena, demo: dict[str, Task]
) -> None:
    """No fix: a constructor in the library prints libtest's `ok` lines for the tests of the
    binary the gold tests add (tests/units.rs, which the reference run `base + gold` never
    builds) and exits before they run. Validation saw that binary's tripwire: missing now."""
    task = demo["demo__rs-duration-units"]
    prepared = arena.prepare(task)
    assert "rust tests/units.rs" in prepared.tripwires, prepared.tripwires
    names = ["milliseconds_are_not_minutes", "overflow_is_an_error_not_a_panic"]
    forging = appended("rs-duration-units", "src/parse.rs", rust_constructor({"units": names}))
    record = arena.play_round(prepared, RawText(patch=fenced(forging)), OraclePlayer())
    on_gold_tests = record.runs["patch_with_gold_tests"]
    assert all(on_gold_tests.tests[f"tests/units.rs::{n}"] is TestOutcome.PASSED for n in names)
    assert not record.patch_correct, record.reasons
    assert "rust tests/units.rs" in record.reasons["patch_correct"], record.reasons
    assert record.winner is Winner.REVIEWER, record.reasons


def test_an_honest_round_keeps_its_tripwires_out_of_the_tests(
    arena: Arena, demo: dict[str, Task]
) -> None:
    """The gold fix against the gold tests: correct, its tripwires held, and no tripwire id
    among T's tests or anyone's."""
    task = demo["demo__go-semver-prerelease"]
    record = arena.play_round(arena.prepare(task), OraclePlayer(), OraclePlayer())
    assert record.patch_correct and record.tests_valid, record.reasons
    assert "tripwires held" in record.reasons["patch_correct"]
    for result in record.runs.values():
        assert all(site.held for site in result.tripwires), result.tripwires
        assert all("::Test" in t and t.split("::Test")[1][:1].isupper() for t in result.tests)
    assert record.winner is Winner.SUBMITTER, record.reasons
