"""Cutting diffs by hunk for the partial baseline, with hunk headers kept right."""

import pygit2

from arena.hunks import join_diff, keep_first_hunks, split_diff
from arena.players.baselines import partial_patch, partial_tests

TWO_FILES = (
    "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3\n"
    "@@ -10,2 +10,2 @@\n p = 1\n-q = 2\n+q = 3\n"
    "diff --git a/b.py b/b.py\n--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-z = 1\n+z = 2\n"
)
TESTS = (
    "diff --git a/t.py b/t.py\n--- a/t.py\n+++ b/t.py\n@@ -1,2 +1,9 @@\n import x\n \n"
    "+\n+def test_one():\n+    assert x.one()\n+\n+\n+def test_two():\n+    assert x.two()\n"
)


def test_keeping_the_first_hunks_drops_whole_files_when_needed() -> None:
    kept = keep_first_hunks(TWO_FILES, 1)
    files = split_diff(kept)
    assert len(files) == 1 and len(files[0].hunks) == 1
    assert "y = 3" in kept and "q = 3" not in kept and "b.py" not in kept
    assert partial_patch(TWO_FILES) == kept
    pygit2.Diff.parse_diff(kept)  # still a well-formed diff


def test_partial_tests_keep_the_first_test_with_recounted_headers() -> None:
    cut = partial_tests(TESTS)
    assert "def test_one" in cut and "def test_two" not in cut
    assert "@@ -1,2 +1,5 @@" in cut
    pygit2.Diff.parse_diff(cut)


def test_single_hunk_patches_have_nothing_to_drop() -> None:
    single = "diff --git a/b.py b/b.py\n--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-z = 1\n+z = 2\n"
    assert partial_patch(single) == ""


def test_a_removed_comment_line_starting_with_dashes_stays_in_its_hunk() -> None:
    """`-- old` removed from a Lua or SQL file is `--- old`: the counts say it is a hunk line."""
    lua = (
        "diff --git a/init.lua b/init.lua\n--- a/init.lua\n+++ b/init.lua\n"
        "@@ -1,3 +1,3 @@\n--- old comment\n+++ new comment\n local x = 1\n-return x\n+return x + 1\n"
        "diff --git a/b.py b/b.py\n--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-z = 1\n+z = 2\n"
    )
    files = split_diff(lua)
    assert [len(f.hunks) for f in files] == [1, 1]
    assert files[0].hunks[0].lines[:2] == ("--- old comment\n", "+++ new comment\n")
    assert join_diff(files) == lua.replace("@@ -1 +1 @@", "@@ -1,1 +1,1 @@")


def test_a_new_files_hunk_starts_at_line_zero() -> None:
    new = "diff --git a/n.py b/n.py\nnew file mode 100644\n--- /dev/null\n+++ b/n.py\n@@ -0,0 +1 @@\n+x\n"
    (file,) = split_diff(new)
    assert (file.hunks[0].old_start, file.hunks[0].new_start) == (0, 1)
