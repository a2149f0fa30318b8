"""Answers into diffs: every answer shape in `answers/` parses to its expected diff or error."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from arena.edits import EditError, answer_to_diff
from ci_runner.diff_text import normalize_diff
from ci_runner.errors import PatchError
from ci_runner.patches import apply_diffs
from tests.arena.answer_base import checkout, read_base

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
