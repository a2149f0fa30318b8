"""Answers into diffs: unified diffs, SEARCH/REPLACE blocks, and clear refusals."""

import pygit2
import pytest

from arena.edits import EditError, answer_to_diff

FILES = {"pkg/calc.py": "def add(a, b):\n    return a - b\n", "README.md": "calc\n"}


def read(path: str) -> str | None:
    return FILES.get(path)


def _applied(diff: str, path: str) -> str:
    """Apply the diff to FILES in a scratch repo and read `path` back."""
    import tempfile
    from pathlib import Path

    root = Path(tempfile.mkdtemp())
    repo = pygit2.init_repository(str(root))
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    repo.index.add_all()
    repo.index.write()
    repo.apply(pygit2.Diff.parse_diff(diff))
    return (root / path).read_text()


def test_fenced_unified_diff_is_taken_as_is() -> None:
    diff = "diff --git a/pkg/calc.py b/pkg/calc.py\n--- a/pkg/calc.py\n+++ b/pkg/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"
    answer = f"Here is the fix:\n\n```diff\n{diff}```\nThat should do it."
    assert (
        _applied(answer_to_diff(answer, read), "pkg/calc.py")
        == "def add(a, b):\n    return a + b\n"
    )


def test_search_replace_blocks_become_a_diff_against_the_base() -> None:
    answer = (
        "pkg/calc.py\n```python\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```\n"
        "tests/test_calc.py\n<<<<<<< SEARCH\n=======\nfrom pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n>>>>>>> REPLACE\n"
    )
    diff = answer_to_diff(answer, read)
    assert _applied(diff, "pkg/calc.py").endswith("return a + b\n")
    assert "def test_add" in _applied(diff, "tests/test_calc.py")


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
    ],
)
def test_unusable_answers_are_parse_errors_with_a_reason(answer: str, message: str) -> None:
    with pytest.raises(EditError, match=message):
        answer_to_diff(answer, read)
