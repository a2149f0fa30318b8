"""Answers into diffs: every answer shape in `answers/` parses to its expected diff or error,
and a fenced answer from an endpoint runs in the real CI runner as the model meant it."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from arena.edits import EditError, answer_to_diff
from arena.players.base import TaskContext, parsed_answer
from arena.players.openai import OpenAIModel, OpenAIPlayer
from ci_runner import CIRequest, CIRunner, CIStatus, Pipeline, TestOutcome
from ci_runner.diff_text import normalize_diff
from ci_runner.errors import PatchError
from ci_runner.patches import apply_diffs
from tests.arena.answer_base import checkout, read_base
from tests.arena.scripted_server import Reply, scripted_server
from tests.arena.tiny import TINY_TASK
from tests.conftest import MakeRepo

ANSWERS = Path(__file__).parent / "answers"
SHAPES = sorted(path.stem for path in ANSWERS.glob("*.md"))

FILES = {"pkg/calc.py": "def add(a, b):\n    return a - b\n", "README.md": "calc\n"}


def read(path: str) -> str | None:
    return FILES.get(path)


def _text(path: Path) -> str:
    return path.read_bytes().decode()  # keeps CRLF as written


def test_there_are_at_least_thirty_answer_shapes() -> None:
    assert len(SHAPES) >= 30
    assert all((ANSWERS / f"{name}.expected").is_file() for name in SHAPES)


@pytest.mark.parametrize("name", SHAPES)
def test_answer_shape_parses_to_its_expected_diff(name: str, tmp_path: Path) -> None:
    """`NAME.md` is the answer, `NAME.expected` the diff (or `error: ...`), and `NAME.apply`
    what applying it to the base tree records (fuzz notes, or `refused: ...`; none if absent)."""
    answer = _text(ANSWERS / f"{name}.md")
    expected = _text(ANSWERS / f"{name}.expected")
    if expected.startswith("error: "):
        with pytest.raises(EditError) as raised:
            answer_to_diff(answer, read_base)
        assert expected.removeprefix("error: ").strip() in str(raised.value)
        return
    diff = answer_to_diff(answer, read_base)
    assert diff == expected
    assert normalize_diff(diff).text == diff  # already normalized: the CI run changes nothing
    applying = ANSWERS / f"{name}.apply"
    outcome = _text(applying) if applying.exists() else ""
    repo = checkout(tmp_path)
    if outcome.startswith("refused: "):
        with pytest.raises(PatchError) as refused:
            apply_diffs(tmp_path, repo, (diff,))
        assert str(refused.value) == outcome.removeprefix("refused: ").strip()
    else:
        assert apply_diffs(tmp_path, repo, (diff,)) == tuple(outcome.splitlines())


def test_search_replace_keeps_crlf_line_endings(tmp_path: Path) -> None:
    diff = answer_to_diff(_text(ANSWERS / "30-sr-crlf-file.md"), read_base)
    apply_diffs(tmp_path, checkout(tmp_path), (diff,))
    assert (tmp_path / "win/legacy.py").read_bytes() == b"def old():\r\n    return 2\r\n"


def test_later_block_edits_the_file_after_the_earlier_block() -> None:
    answer = (
        "pkg/calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n"
        ">>>>>>> REPLACE\n\n<<<<<<< SEARCH\n    return a + b\n=======\n    return b + a\n"
        ">>>>>>> REPLACE\n"
    )
    assert "+    return b + a\n" in answer_to_diff(answer, read)


def test_search_replace_blocks_become_a_diff_against_the_base() -> None:
    answer = (
        "pkg/calc.py\n```python\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```\n"
        "tests/test_calc.py\n<<<<<<< SEARCH\n=======\nfrom pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n>>>>>>> REPLACE\n"
    )
    diff = pygit2.Diff.parse_diff(answer_to_diff(answer, read))
    assert sorted(patch.delta.new_file.path for patch in diff) == [
        "pkg/calc.py",
        "tests/test_calc.py",
    ]


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("", "empty"),
        ("I think you should change the subtraction.", "neither a unified diff nor SEARCH/REPLACE"),
        (
            "pkg/calc.py\n<<<<<<< SEARCH\n    return b - a\n=======\n    return a + b\n>>>>>>> REPLACE\n",
            "not found",
        ),
        ("nope.py\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n", "does not exist"),
        (
            "pkg/calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a - b\n>>>>>>> REPLACE\n",
            "change nothing",
        ),
        ("```diff\ndiff --git a/x b/x\n--- a/x\n+++ b/x\n@@ garbage\n```", "malformed"),
        ("```diff\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n" + "+y\n" * 6_000_000 + "```", "MiB limit"),
    ],
)
def test_unusable_answers_are_parse_errors_with_a_reason(answer: str, message: str) -> None:
    with pytest.raises(EditError, match=message):
        answer_to_diff(answer, read)


SR_README = "README.md\n<<<<<<< SEARCH\ncalc\n=======\ncalc, fixed\n>>>>>>> REPLACE\n"
DIFF_CALC = "```diff\n--- a/pkg/calc.py\n+++ b/pkg/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n```\n"


def test_blocks_and_a_diff_of_other_files_are_both_used_in_the_answers_order() -> None:
    diff = answer_to_diff(SR_README + "\n" + DIFF_CALC, read)
    assert [p.delta.new_file.path for p in pygit2.Diff.parse_diff(diff)] == [
        "README.md",
        "pkg/calc.py",
    ]


def test_a_broken_diff_beside_usable_blocks_refuses_the_whole_answer() -> None:
    broken = "```diff\n--- a/pkg/calc.py\n+++ b/pkg/calc.py\n@@ -1,3 +1,3 @@\n def add(a, b):\n"
    with pytest.raises(EditError, match="cut short"):
        answer_to_diff(SR_README + "\n" + broken, read)


def test_search_replace_markers_inside_a_hunk_are_content() -> None:
    conflict = {"merge.txt": "<<<<<<< SEARCH\nx\n"}
    answer = "--- a/merge.txt\n+++ b/merge.txt\n@@ -1,2 +1,2 @@\n <<<<<<< SEARCH\n-x\n+y\n"
    assert answer_to_diff(answer, conflict.get).endswith(" <<<<<<< SEARCH\n-x\n+y\n")


def test_a_refused_answer_has_no_diff_and_says_why() -> None:
    answer = parsed_answer(
        "```diff\n--- a/long.py\n+++ b/long.py\n@@ -1,5 +1,5 @@\n x1 = 1\n", read_base, 0.1
    )
    assert answer.diff is None
    assert answer.failure is not None and "cut short, so none of it is used" in answer.failure


PROJECT = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "README.md": "# calc\n\n```python\n>>> add(1, 2)\n-1\n```\n",
    "test_calc.py": (
        "from pathlib import Path\n\nfrom calc import add\n\n\ndef test_add():\n"
        "    assert add(1, 2) == 3\n\n\ndef test_readme_examples():\n"
        '    readme = Path("README.md").read_text()\n'
        '    assert ">>> add(1, 2)\\n3\\n```" in readme and ">>> add(2, 2)\\n4\\n```" in readme\n'
    ),
}
PYTEST = Pipeline.model_validate(
    {
        "steps": [
            {"name": "test", "run": "python3 -m pytest -q -p no:cacheprovider --junitxml=r.xml"}
        ],
        "report": {"format": "junit", "path": "r.xml"},
    }
)
FENCED_ANSWER = (
    "The README example and `add` are both wrong:\n\n```diff\n--- a/README.md\n+++ b/README.md\n"
    "@@ -3,4 +3,9 @@\n ```python\n >>> add(1, 2)\n--1\n+3\n ```\n+\n+```python\n+>>> add(2, 2)\n"
    "+4\n+```\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n"
    "-    return a - b\n+    return a + b\n```\n\nNow the tests pass.\n"
)


@pytest.mark.docker
@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_a_fenced_answer_with_fence_lines_in_its_hunks_passes_in_the_real_runner(
    newline: str, runner: CIRunner, make_repo: MakeRepo, images: dict[str, str]
) -> None:
    """The answer comes from an endpoint as raw text; the ``` lines inside the README hunk
    are content, so the calc.py fix after them is applied too and the tests pass."""
    with scripted_server([Reply(content=FENCED_ANSWER.replace("\n", newline))]) as server:
        spec = OpenAIModel(name="llm", base_url=server.url, model="m", max_retries=0)
        answer = OpenAIPlayer(spec, None).propose_patch(TaskContext(TINY_TASK, "", PROJECT.get))
    assert answer.diff is not None, answer.failure
    repo, commit = make_repo(PROJECT)
    result = runner.run(
        CIRequest(
            repo=repo, commit=commit, pipeline=PYTEST, image=images["python"], diffs=(answer.diff,)
        )
    )
    assert result.status is CIStatus.PASSED, result.error or result.patch_error
    assert result.tests == {
        "test_calc::test_add": TestOutcome.PASSED,
        "test_calc::test_readme_examples": TestOutcome.PASSED,
    }
