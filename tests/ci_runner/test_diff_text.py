"""Diffs read by their own structure: each hunk holds the lines its `@@` counts say."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from ci_runner.diff_text import normalize_diff, read_diff
from ci_runner.patches import apply_diffs

CALC = "--- a/calc.py\n+++ b/calc.py\n"


def _checkout(root: Path, files: dict[str, str]) -> pygit2.Repository:
    repo = pygit2.init_repository(str(root))
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    repo.index.add_all()
    repo.index.write()
    who = pygit2.Signature("arena", "arena@example.invalid")
    repo.create_commit("HEAD", who, who, "base", repo.index.write_tree(), [])
    return repo


def test_fence_lines_inside_a_hunk_are_content_and_the_closing_fence_is_not() -> None:
    text = "```diff\n" + CALC + "@@ -1,3 +1,4 @@\n ```\n-a\n+b\n+```\n ```\n```\nprose\n"
    normalized = normalize_diff(text)
    assert normalized.text == (
        "diff --git a/calc.py b/calc.py\n" + CALC + "@@ -1,3 +1,4 @@\n ```\n-a\n+b\n+```\n ```\n"
    )
    assert normalized.notes == () and normalized.cut_short is None


def test_a_removed_line_that_looks_like_a_file_header_stays_in_its_hunk() -> None:
    text = "--- a/ops.md\n+++ b/ops.md\n@@ -1,2 +1,2 @@\n--- x\n+++ y\n -- z\n"
    (file,) = read_diff(text)
    assert file.hunks[0].body == ("--- x\n", "+++ y\n", " -- z\n")
    assert normalize_diff(text).text == "diff --git a/ops.md b/ops.md\n" + text


def test_prose_bullets_after_a_hunk_whose_counts_are_met_are_not_removed_lines() -> None:
    text = CALC + "@@ -1 +1 @@\n-a\n+b\n- this changes a to b\n- nothing else\n"
    assert normalize_diff(text).text.endswith("@@ -1 +1 @@\n-a\n+b\n")


def test_counts_too_large_for_a_finished_hunk_are_recounted() -> None:
    """A hunk ended by a closing fence, prose or the next file was finished: the counts were
    wrong, and the body decides."""
    for after in (
        "```\n",
        "That is all.\n",
        "--- a/other.py\n+++ b/other.py\n@@ -1 +1 @@\n-x\n+y\n",
    ):
        normalized = normalize_diff(CALC + "@@ -1,9 +1,9 @@\n-a\n+b\n" + after)
        assert "@@ -1 +1 @@\n-a\n+b\n" in normalized.text
        assert normalized.cut_short is None
        assert normalized.notes[0] == (
            "calc.py: hunk #1 line counts recounted (@@ -1,9 +1,9 @@ holds -1 +1 lines)"
        )


def test_counts_too_small_take_the_lines_that_run_on_to_the_next_hunk_or_fence() -> None:
    text = CALC + "@@ -1 +1 @@\n-a\n+b\n+c\n@@ -5 +6 @@\n-e\n+f\n+g\n```\n"
    assert normalize_diff(text).text == (
        "diff --git a/calc.py b/calc.py\n" + CALC + "@@ -1 +1,2 @@\n-a\n+b\n+c\n"
        "@@ -5 +6,2 @@\n-e\n+f\n+g\n"
    )


def test_a_hunk_the_text_ends_inside_of_is_cut_short_and_the_runner_still_recounts_it() -> None:
    normalized = normalize_diff(CALC + "@@ -1,4 +1,4 @@\n x\n-a\n+b\n")
    assert normalized.cut_short == (
        "calc.py: hunk #1 (@@ -1,4 +1,4 @@) is cut short: the text ends after "
        "2 of its 4 old and 2 of its 4 new lines"
    )
    assert normalized.text.endswith("@@ -1,2 +1,2 @@\n x\n-a\n+b\n")


def test_a_hunk_without_numbers_runs_to_its_last_hunk_line() -> None:
    normalized = normalize_diff(CALC + "@@ ... @@\n x\n-a\n+b\n\nprose\n")
    assert normalized.text.endswith("@@ -1,2 +1,2 @@\n x\n-a\n+b\n")
    assert normalized.cut_short is None


def test_a_crlf_diff_is_read_as_lf_and_a_crlf_file_keeps_its_endings(tmp_path: Path) -> None:
    crlf = "--- a/win.py\r\n+++ b/win.py\r\n@@ -1,2 +1,2 @@\r\n x = 1\r\n-y = 2\r\n+y = 3\r\n"
    normalized = normalize_diff(crlf)
    assert "\r" not in normalized.text
    assert normalized.notes == ("win.py: the diff's CRLF line endings were read as LF",)
    repo = _checkout(tmp_path, {"win.py": "x = 1\r\ny = 2\r\n"})
    apply_diffs(tmp_path, repo, (crlf,))
    assert (tmp_path / "win.py").read_bytes() == b"x = 1\r\ny = 3\r\n"


def test_a_git_diff_of_a_crlf_file_is_left_as_git_wrote_it() -> None:
    git = "diff --git a/w b/w\n--- a/w\n+++ b/w\n@@ -1 +1 @@\n-a\r\n+b\r\n"
    assert normalize_diff(git).text == git


@pytest.mark.parametrize(
    ("old", "new"),
    [("a/calc.py", "calc.py"), ("calc.py", "b/calc.py"), ("a/calc.py", "b/calc.py")],
)
def test_a_b_prefix_on_one_side_names_the_same_file(old: str, new: str) -> None:
    text = normalize_diff(f"--- {old}\n+++ {new}\n@@ -1 +1 @@\n-a\n+b\n").text
    assert text.startswith("diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n")


RENAMES = {
    "rename-and-edit": (
        "diff --git a/old.py b/new.py\nrename from old.py\nrename to new.py\n"
        "--- a/old.py\n+++ b/new.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n",
        {"new.py": "a = 2\n"},
    ),
    "plain-rename-and-edit": (
        "--- a/old.py\n+++ b/new.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n",
        {"new.py": "a = 2\n"},
    ),
    "pure-rename": (
        "diff --git a/old.py b/new.py\nrename from old.py\nrename to new.py\n",
        {"new.py": "a = 1\n"},
    ),
    "mode-and-edit": (
        "diff --git a/old.py b/old.py\nold mode 100644\nnew mode 100755\n"
        "--- a/old.py\n+++ b/old.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n",
        {"old.py": "a = 2\n"},
    ),
}


@pytest.mark.parametrize("case", sorted(RENAMES))
def test_renames_and_mode_changes_without_similarity_or_index_lines_apply(
    case: str, tmp_path: Path
) -> None:
    diff, after = RENAMES[case]
    repo = _checkout(tmp_path, {"old.py": "a = 1\n"})
    apply_diffs(tmp_path, repo, (diff,))
    for name, text in after.items():
        assert (tmp_path / name).read_text() == text
    if "old.py" not in after:
        assert not (tmp_path / "old.py").exists()


def test_git_s_own_rename_header_comes_out_unchanged() -> None:
    git = (
        "diff --git a/a b/b\nold mode 100644\nnew mode 100755\nsimilarity index 80%\n"
        "rename from a\nrename to b\nindex 9405325..c2f2e5e\n--- a/a\n+++ b/b\n"
        "@@ -2,2 +2,2 @@ a\n b\n-e\n+E\n"
    )
    assert normalize_diff(git).text == git


def test_read_diff_says_which_lines_of_the_text_each_file_was_read_from() -> None:
    text = (
        "Fix:\n```diff\n"
        + CALC
        + "@@ -1 +1 @@\n-a\n+b\n```\nand\n--- x\n+++ x\n@@ -1 +1 @@\n-c\n+d\n"
    )
    first, second = read_diff(text)
    lines = text.splitlines()
    assert lines[first.first_line : first.end_line] == [
        "--- a/calc.py",
        "+++ b/calc.py",
        "@@ -1 +1 @@",
        "-a",
        "+b",
    ]
    assert lines[second.first_line :] == lines[second.first_line : second.end_line]
    assert second.header == ("--- x\n", "+++ x\n") and second.hunks[0].body == ("-c\n", "+d\n")
