"""P' and N(P'): a submitter's patch without its changes to tests and test infrastructure,
and the same with a neutral change to every file it touches (see swing-protocol.md).

A patch is judged by tests it does not control: what it does to test files, test
configuration, the test tools' own names and CI configuration is dropped before the gold
tests run (as SWE-bench resets test files), so a `conftest.py` hook that turns failures into
passes, a no-op assertion macro or an updated old test cannot decide the round. Files the gold
fix itself changes are code whatever their names, so the oracle is never cut.

N(P') lets a catch be told from a test that recognises P's bytes: a comment line appended to
each file P' touches changes no behaviour, so a behavioural catch survives it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from functools import cache

from arena.hunks import FilePatch, Hunk, split_diff
from arena.languages import profiles
from arena.languages.profile import TestSpans
from arena.ownership.changes import apply_file, file_changes, file_paths
from arena.unified import unified_diff
from ci_runner import PatchError, normalize_diff

ReadFile = Callable[[str], str | None]

# CI configuration: what runs the tests, not what is tested
_CI_PATHS = re.compile(
    r"^(?:\.github/|\.gitlab-ci\.yml$|\.gitlab/|\.circleci/|\.travis\.yml$|azure-pipelines\.yml$"
    r"|appveyor\.yml$|Jenkinsfile$|\.buildkite/|\.drone\.yml$|\.cirrus\.yml$)"
)
_TEST_FOLDERS = frozenset(
    {"test", "tests", "testdata", "testing", "unittest", "unittests", "unit_tests", "__tests__",
     "spec", "cypress", "e2e"}
)  # fmt: skip
# a library's own test helpers, which its users import: numpy.testing, django.test, torch.testing
_LIBRARY_TEST_PACKAGES = frozenset({"test", "testing", "_testing"})
_TEST_CONFIG = frozenset({".bazelrc"})  # of no one language
_TEST_FILES = re.compile(r"\.(?:test|spec)\.[cm]?[jt]sx?$")  # JavaScript's and TypeScript's
# a line comment per file kind, for N(P') (the languages' own come from their PatchRules);
# files of other kinds are left as they are
_COMMENT: dict[str, str | None] = {
    ".toml": "#", ".cfg": "#", ".ini": "#", ".yml": "#", ".yaml": "#", ".sh": "#", ".txt": None,
    ".js": "//", ".ts": "//", ".tsx": "//", ".jsx": "//", ".java": "//", ".kt": "//",
    ".swift": "//", ".cs": "//",
}  # fmt: skip
_COMMENT_BY_NAME = {"Makefile": "#", "Dockerfile": "#"}
NEUTRAL_LINE = "arena: a neutral change (N(P')): a behavioural test does not notice it"


@dataclass(frozen=True)
class _Rules:
    """Every registered language's PatchRules joined with the generic ones."""

    shadows_tool: tuple[Callable[[Sequence[str]], bool], ...]
    test_config: frozenset[str]
    harness: tuple[re.Pattern[str], ...]
    test_files: tuple[re.Pattern[str], ...]
    test_spans: tuple[TestSpans, ...]
    comments: dict[str, str | None]
    comments_by_name: dict[str, str]


@cache
def _rules() -> _Rules:
    rules = [profile.patch_rules for profile in profiles()]
    return _Rules(
        shadows_tool=tuple(r.shadows_tool for r in rules if r.shadows_tool is not None),
        test_config=_TEST_CONFIG.union(*(r.test_config for r in rules)),
        harness=tuple(r.harness for r in rules if r.harness is not None),
        test_files=(_TEST_FILES, *(r.test_files for r in rules if r.test_files is not None)),
        test_spans=tuple(r.test_spans for r in rules if r.test_spans is not None),
        comments={**_COMMENT, **{k: v for r in rules for k, v in r.comments.items()}},
        comments_by_name={
            **_COMMENT_BY_NAME,
            **{k: v for r in rules for k, v in r.comments_by_name.items()},
        },
    )


@dataclass(frozen=True)
class ScopedPatch:
    """P' and what was dropped from P to make it, for the evidence."""

    kept: str
    dropped: tuple[str, ...]  # "path (why)" per dropped file or part of one

    def summary(self) -> str:
        if not self.dropped:
            return "the patch changes no test, test configuration or CI file"
        shown = "; ".join(self.dropped[:10]) + (" ..." if len(self.dropped) > 10 else "")
        return f"dropped before the gold tests ran (P'): {shown}"


def _library_package(folder: str, exists: Callable[[str], bool]) -> bool:
    """`folder` (a/b/testing) is a package of a library, not a test suite: named as library
    test helpers are (`testing`, `test`), a Python package inside a Python package."""
    parent, name = posixpath.split(folder)
    return (
        name in _LIBRARY_TEST_PACKAGES
        and bool(parent)
        and exists(f"{folder}/__init__.py")
        and exists(f"{parent}/__init__.py")
    )


def _in_test_folder(parts: list[str], exists: Callable[[str], bool]) -> bool:
    """Whether a file under `parts` (its folders) lies in a test folder that is not library
    code (numpy/testing/utils.py is numpy's; numpy/core/tests/helpers.py is its tests')."""
    for n, part in enumerate(parts):
        if part in _TEST_FOLDERS and not _library_package("/".join(parts[: n + 1]), exists):
            return True
    return False


def _why_test_file(path: str, exists: Callable[[str], bool] = lambda _: False) -> str | None:
    """Why a path is test code or test infrastructure by its name (and, for a folder named as
    a library's test helpers, whether it is a package of the library: `exists`), or None."""
    parts = path.split("/")
    name = parts[-1]
    if _CI_PATHS.match(path):
        return "CI configuration"
    rules = _rules()
    if any(shadows(parts) for shadows in rules.shadows_tool):
        return "shadows a test tool"
    if name in rules.test_config:
        return "test configuration"
    if any(harness.search(path) for harness in rules.harness):
        return "test harness"
    if _in_test_folder(parts[:-1], exists):
        return "test folder"
    if any(test_files.search(name) for test_files in rules.test_files):
        return "test file"
    return None


def _test_spans(path: str, source: str) -> list[tuple[int, int]]:
    """The test-only parts of a file shared with the code, as its language reads them."""
    for spans in _rules().test_spans:
        found = spans(path, source)
        if found is not None:
            return found
    return []


def _within(lines: Iterable[int], spans: list[tuple[int, int]]) -> bool:
    return all(any(a <= n <= b for a, b in spans) for n in lines)


def _changed_lines(hunk: Hunk) -> tuple[list[int], list[int]]:
    """(old lines removed, new lines added) of a hunk, 1-based, at its stated place."""
    old, new = hunk.old_start, hunk.new_start
    removed: list[int] = []
    added: list[int] = []
    for line in hunk.lines:
        kind = line[:1]
        if kind == "-":
            removed.append(old)
            old += 1
        elif kind == "+":
            added.append(new)
            new += 1
        elif kind == " ":
            old += 1
            new += 1
    return removed, added


def _renumbered(hunks: list[Hunk]) -> tuple[Hunk, ...]:
    """Kept hunks with new-side starts that account for the dropped ones."""
    out: list[Hunk] = []
    shift = 0
    for hunk in hunks:
        out.append(Hunk(hunk.old_start, hunk.old_start + shift, hunk.tail, hunk.lines))
        removed = sum(1 for line in hunk.lines if line[:1] == "-")
        added = sum(1 for line in hunk.lines if line[:1] == "+")
        shift += added - removed
    return tuple(out)


def _scoped_file(
    patch: FilePatch, path: str, read_base: ReadFile
) -> tuple[FilePatch | None, str | None]:
    """The file's patch with its test-code hunks dropped (None: all of it), and why."""
    old_text = read_base(path) or ""
    old_spans = _test_spans(path, old_text)
    new_text = "".join(
        c.new_text for c in file_changes(patch.render(), lambda p: old_text if p == path else None)
    )
    new_spans = _test_spans(path, new_text)
    if not old_spans and not new_spans:
        return patch, None
    kept: list[Hunk] = []
    for hunk in patch.hunks:
        removed, added = _changed_lines(hunk)
        if _within(removed, old_spans) and _within(added, new_spans):
            continue
        kept.append(hunk)
    if len(kept) == len(patch.hunks):
        return patch, None
    why = f"{path} ({len(patch.hunks) - len(kept)} hunk(s) inside test code or test settings)"
    if not kept:
        return None, why
    return FilePatch(patch.header, _renumbered(kept)), why


def scope_patch(
    patch: str, gold_patch: str, gold_test_patch: str, read_base: ReadFile
) -> ScopedPatch:
    """P': `patch` without its changes to test code, test configuration, test tools' names
    and CI configuration. A file the gold test patch touches is dropped whole; one the gold
    patch touches is kept whole."""
    try:
        text_ = normalize_diff(patch).text
    except PatchError:
        return ScopedPatch(patch, ())  # refused as it is by the runner, with its reason
    gold_tests = _paths(gold_test_patch)
    gold_code = _paths(gold_patch) - gold_tests
    files = split_diff(text_)
    created = {new for f in files if (new := file_paths(f.header)[1]) is not None}

    def exists(path: str) -> bool:  # at base, or made by the patch
        return path in created or read_base(path) is not None

    kept: list[FilePatch] = []
    dropped: list[str] = []
    for file in files:
        old, new = file_paths(file.header)
        paths = {p for p in (old, new) if p is not None}
        if not paths or paths & gold_code:
            kept.append(file)
            continue
        path = new or old or ""
        if paths & gold_tests:
            dropped.append(f"{path} (a file the gold tests change)")
            continue
        why = next((w for p in sorted(paths) if (w := _why_test_file(p, exists))), None)
        if why is not None:
            dropped.append(f"{path} ({why})")
            continue
        scoped, partly = _scoped_file(file, old or path, read_base) if old else (file, None)
        if partly is not None:
            dropped.append(partly)
        if scoped is not None:
            kept.append(scoped)
    if not dropped:
        return ScopedPatch(patch, ())
    return ScopedPatch(
        "".join(f.render() for f in kept if f.hunks or _keeps_header(f)), tuple(dropped)
    )


def _keeps_header(file: FilePatch) -> bool:
    """A file patch without hunks that still changes something (a rename, a mode, a delete
    of an empty file)."""
    return any(
        line.startswith(("rename ", "new file mode", "deleted file mode", "old mode", "new mode"))
        for line in file.header
    )


def _paths(diff: str) -> set[str]:
    paths: set[str] = set()
    for file in split_diff(diff):
        paths.update(p for p in file_paths(file.header) if p is not None)
    return paths


def _comment(path: str) -> str | None:
    name = posixpath.basename(path)
    rules = _rules()
    if name in rules.comments_by_name:
        return rules.comments_by_name[name]
    return rules.comments.get(posixpath.splitext(name)[1])


def neutral_change(patch: str, read_base: ReadFile) -> tuple[str, tuple[str, ...]]:
    """The neutral change of N(P'): a diff, applied after P' itself, that appends a comment line
    to every file P' leaves in place, and the paths it changes (files without a line comment
    stay as P' has them).

    P' is applied as it is, so its mode changes, renames and every section it holds for one
    file stay as they are; the comment goes on each file as P''s sections leave it, applied
    in order."""
    final: dict[str, str | None] = {}  # path -> its text after P' (None: deleted)
    with suppress(PatchError):  # refused by the runner too: read as it is
        patch = normalize_diff(patch).text
    for file in split_diff(patch):
        old_path, new_path = file_paths(file.header)
        start = old_path if old_path is not None else new_path
        if start is None:
            continue
        before = final.get(start, read_base(start) or "") if old_path is not None else ""
        if old_path is not None and old_path != new_path:
            final[old_path] = None
        if new_path is not None:
            final[new_path] = apply_file(before or "", file.hunks)[0]
    out: list[str] = []
    changed: list[str] = []
    for path, content in final.items():
        marker = _comment(path)
        if content is None or marker is None:
            continue
        ending = "" if not content or content.endswith("\n") else "\n"
        appended = f"{content}{ending}{marker} {NEUTRAL_LINE}\n"
        out.append(unified_diff(path, content, appended))
        changed.append(path)
    return "".join(out), tuple(changed)
