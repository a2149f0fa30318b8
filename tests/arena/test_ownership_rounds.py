"""Real rounds in Docker, one per language (and a pipeline run from a subdirectory): a reviewer
who changes existing tests owns exactly those tests."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from arena.ci import TaskCI
from arena.match import Arena, PreparedTask
from arena.players.base import Answer, Player, TaskContext
from arena.players.baselines import OraclePlayer
from arena.protocol import Winner
from arena.tasks.demo import demo_tasks
from arena.tasks.schema import Task
from ci_runner import CIRunner, CISettings
from ci_runner.images import ImageBuilder
from ci_runner.workspace import Workspaces
from tests.conftest import MakeRepo

DEMO = Path(__file__).parents[2] / "arena" / "tasks" / "demo"


def edit(path: str, before: str, *replacements: tuple[str, str]) -> str:
    """A git diff of `path` with each (old, new) replaced once in `before`."""
    after = before
    for old, new in replacements:
        assert old in after, old
        after = after.replace(old, new, 1)
    body = "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            f"a/{path}",
            f"b/{path}",
        )
    )
    return f"diff --git a/{path} b/{path}\n{body}"


def demo_edit(task: str, path: str, *replacements: tuple[str, str]) -> str:
    return edit(path, (DEMO / task / "repo" / path).read_text(), *replacements)


class Scripted(Player):
    """Answers a fixed patch (None: the gold patch) and fixed tests."""

    name = "scripted"

    def __init__(self, tests: str, patch: str | None = None) -> None:
        self._tests, self._patch = tests, patch

    def propose_patch(self, ctx: TaskContext) -> Answer:
        diff = ctx.task.patch if self._patch is None else self._patch
        return Answer(raw_text=diff, diff=diff)

    def propose_tests(self, ctx: TaskContext, patch: str | None) -> Answer:
        return Answer(raw_text=self._tests, diff=self._tests)


@pytest.fixture(scope="module")
def arena(runner: CIRunner, ci_settings: CISettings, images: dict[str, str]) -> Arena:
    ci = TaskCI(
        runner, ImageBuilder(runner.provider, ci_settings), ci_settings.cache_dir / "ci-results"
    )
    workspaces = Workspaces(ci_settings.mirrors_dir, ci_settings.runs_dir)
    return Arena(ci, workspaces, ci_settings.cache_dir / "retrieval")


@pytest.fixture(scope="module")
def demo(ci_settings: CISettings) -> dict[str, Task]:
    return {t.instance_id: t for t in demo_tasks(ci_settings.cache_dir / "demo-repos")}


def prepare(arena: Arena, demo: dict[str, Task], task: str) -> PreparedTask:
    return arena.prepare(demo[f"demo__{task}"])


SLUG_PATCH_BREAKING_ACCENTS = demo_edit(
    "py-textkit-slug",
    "textkit/slug.py",
    ('r"[^a-z0-9]")', 'r"[^a-z0-9]+")'),
    ('"NFKD", text)', '"NFKD", text).replace("\\u0301", "?")'),
)
SLUG_TESTS = demo_edit(
    "py-textkit-slug",
    "tests/test_slug.py",
    (
        '== "hello-world"\n',
        '== "hello-world"\n    assert slugify("Hello,  World!") == "hello-world"\n',
    ),
)


def test_python_a_patch_breaking_an_untouched_test_of_the_reviewers_file_is_not_caught(
    arena: Arena, demo: dict[str, Task]
) -> None:
    """T strengthens `test_slugify_lowercases_words`; P fixes that but breaks
    `test_slugify_drops_accents` in the same file: P is wrong, T does not catch it: a draw."""
    prepared = prepare(arena, demo, "py-textkit-slug")
    scripted = Scripted(SLUG_TESTS, SLUG_PATCH_BREAKING_ACCENTS)
    record = arena.play_round(prepared, scripted, scripted)
    assert record.tests_valid, record.reasons
    assert "1 test(s)" in record.reasons["tests_valid"]
    assert record.patch_applies and not record.patch_correct, record.reasons
    on_patch = record.runs["tests_on_patch"].tests
    assert on_patch["tests.test_slug::test_slugify_drops_accents"] == "failed"
    assert not record.tests_catch and record.winner is Winner.DRAW, record.reasons


def test_go_strengthening_an_existing_test_is_valid(arena: Arena, demo: dict[str, Task]) -> None:
    tests = demo_edit(
        "go-lru-recency",
        "lru_test.go",
        (
            '\t\tt.Error("found a key never stored")\n\t}\n',
            '\t\tt.Error("found a key never stored")\n\t}\n'
            '\tr, _ := New(2)\n\tr.Put("a", []byte("1"))\n\tr.Put("b", []byte("2"))\n'
            '\tr.Get("a")\n\tr.Put("c", []byte("3"))\n'
            '\tif !r.Contains("a") {\n\t\tt.Error("a was read last")\n\t}\n',
        ),
    )
    record = arena.play_round(
        prepare(arena, demo, "go-lru-recency"), OraclePlayer(), Scripted(tests)
    )
    assert record.tests_valid and "1 test(s)" in record.reasons["tests_valid"], record.reasons
    assert record.patch_correct and not record.tests_catch and record.winner is Winner.SUBMITTER


def test_rust_a_doctest_and_strengthened_module_and_integration_tests(
    arena: Arena, demo: dict[str, Task]
) -> None:
    """T documents split_record with an example (a new doctest) and strengthens a module test
    in src/record.rs, the file the gold fix changes, and an existing integration test; the
    other tests of both files are not T's."""
    doc = demo_edit(
        "rs-csv-quotes",
        "src/record.rs",
        (
            "/// Split one line into fields, honouring double-quoted fields.\n",
            "/// Split one line into fields, honouring double-quoted fields.\n///\n/// ```\n"
            '/// assert_eq!(tinycsv::split_record("a,", \',\').unwrap(), vec!["a", ""]);\n'
            "/// ```\n",
        ),
        (  # below the gold fix's hunks: on `base + gold` this lands 5 lines lower
            'vec!["a,b", "c"]);\n',
            'vec!["a,b", "c"]);\n        assert_eq!(split_record("x,", \',\').unwrap(), vec!["x", ""]);\n',
        ),
    )
    strengthened = demo_edit(
        "rs-csv-quotes",
        "tests/errors.rs",
        (
            'vec!["x", "y"]);\n',
            'vec!["x", "y"]);\n    assert_eq!(split_record("x\\t", \'\\t\').unwrap(), vec!["x", ""]);\n',
        ),
    )
    prepared = prepare(arena, demo, "rs-csv-quotes")
    record = arena.play_round(prepared, OraclePlayer(), Scripted(doc + strengthened))
    assert record.tests_valid and "3 test(s)" in record.reasons["tests_valid"], record.reasons
    on_base, on_gold = record.runs["tests_on_base"].tests, record.runs["tests_on_gold"].tests
    assert on_base["tests/errors.rs::tab_separator"] == "failed"
    assert on_base["src/lib.rs::record::tests::quoted_separator"] == "failed"
    assert on_gold["doc:tinycsv::src/record.rs - record::split_record"] == "passed"
    assert record.winner is Winner.SUBMITTER


def test_cpp_strengthening_a_case_run_by_ctest_from_the_build_directory(
    arena: Arena, demo: dict[str, Task]
) -> None:
    tests = demo_edit(
        "cpp-strutil-split",
        "tests/test_strutil.cpp",
        (
            'static void split_simple() { CHECK((strutil::split("a,b,c", \',\') == Parts{"a", "b", "c"})); }',
            "static void split_simple() {\n"
            '    CHECK((strutil::split("a,b,c", \',\') == Parts{"a", "b", "c"}));\n'
            '    CHECK((strutil::split("a,b,", \',\') == Parts{"a", "b", ""}));\n'
            "}",
        ),
    )
    record = arena.play_round(
        prepare(arena, demo, "cpp-strutil-split"), OraclePlayer(), Scripted(tests)
    )
    assert record.tests_valid and "1 test(s)" in record.reasons["tests_valid"], record.reasons
    assert record.runs["tests_on_base"].tests["split_simple"] == "failed"
    assert record.winner is Winner.SUBMITTER


SUBDIR_SOURCE = "def shout(text):\n    return text.upper()\n"
SUBDIR_TESTS = (
    "from shout import shout\n\n\nclass TestShout:\n"
    "    def test_words(self):\n        assert shout('a b') == 'A B'\n\n"
    "    def test_empty(self):\n        assert shout('') == ''\n"
)


def test_a_pipeline_run_from_a_subdirectory_maps_the_reviewers_tests(
    arena: Arena, make_repo: MakeRepo
) -> None:
    """pytest runs in `backend/`: its ids say `tests.test_shout`, the diff says
    `backend/tests/test_shout.py`."""
    repo, commit = make_repo(
        {"backend/shout.py": SUBDIR_SOURCE, "backend/tests/test_shout.py": SUBDIR_TESTS}
    )
    fix = edit("backend/shout.py", SUBDIR_SOURCE, ("text.upper()", "text.upper() + '!'"))
    gold_tests = edit(
        "backend/tests/test_shout.py",
        SUBDIR_TESTS,
        ("'A B'", "'A B!'"),
        ("== ''", "== '!'"),
    )
    task = Task.model_validate(
        {
            "instance_id": "subdir-shout",
            "repo": repo,
            "base_commit": commit,
            "language": "python",
            "patch": fix,
            "test_patch": gold_tests,
            "pipeline": {
                "env": {"PYTHONDONTWRITEBYTECODE": "1"},
                "steps": [
                    {
                        "name": "test",
                        "run": "python3 -m pytest -q -p no:cacheprovider --junitxml=report.xml",
                        "workdir": "backend",
                    }
                ],
                "report": {"format": "junit", "path": "backend/report.xml"},
            },
        }
    )
    reviewer = Scripted(edit("backend/tests/test_shout.py", SUBDIR_TESTS, ("'A B'", "'A B!'")))
    record = arena.play_round(arena.prepare(task), OraclePlayer(), reviewer)
    assert record.tests_valid and "1 test(s)" in record.reasons["tests_valid"], record.reasons
    assert "tests.test_shout.TestShout::test_words" in record.runs["tests_on_gold"].tests
    assert record.winner is Winner.SUBMITTER
