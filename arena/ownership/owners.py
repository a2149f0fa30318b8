"""The report ids whose test definitions a diff changes."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

from arena.languages import profiles
from arena.languages.cases import CaseFinder, ReadFile, TestCase, innermost
from arena.ownership.changes import file_changes


def _finder(path: str) -> CaseFinder | None:
    """The case finder of the language whose test files end as `path` does (its profile's)."""
    suffix = posixpath.splitext(path)[1].lower()
    return next((p.find_cases for p in profiles() if suffix in p.test_suffixes), None)


def file_cases(path: str | None, text: str, read_base: ReadFile) -> list[TestCase]:
    """The test cases a file defines, by the parser of its language (none: no parser)."""
    finder = _finder(path or "")
    return [] if path is None or finder is None else finder(path, text, read_base)


def _definition(case: TestCase, lines: list[str]) -> tuple[str, str]:
    """A case's name and the text of its lines."""
    return case.label, "\n".join(lines[case.start - 1 : case.end])


def _touched(cases: list[TestCase], lines: Iterable[int]) -> list[TestCase]:
    found = {id(case): case for line in lines if (case := innermost(cases, line)) is not None}
    return list(found.values())


def changed_cases(test_diff: str, read_base: ReadFile) -> list[TestCase]:
    """The test cases whose lines the diff removes (on base) or adds (on base + diff), and
    whose definition is not the same on the other side: a diff that happens to re-add a
    case's closing brace (`+}` before a new case, as diff tools may align it) changes no case
    but the new one, and a case moved whole is not changed."""
    cases: list[TestCase] = []
    for change in file_changes(test_diff, read_base):
        if not change.removed and not change.added:
            continue
        old_lines, new_lines = change.old_text.splitlines(), change.new_text.splitlines()
        old = file_cases(change.old_path, change.old_text, read_base)
        new = file_cases(change.new_path, change.new_text, read_base)
        before = {_definition(case, old_lines) for case in old}
        after = {_definition(case, new_lines) for case in new}
        cases += [
            c for c in _touched(old, change.removed) if _definition(c, old_lines) not in after
        ]
        cases += [c for c in _touched(new, change.added) if _definition(c, new_lines) not in before]
    return cases


def owned_test_ids(test_diff: str, read_base: ReadFile, report_ids: Iterable[str]) -> set[str]:
    """The ids of `report_ids` defined by a test case whose lines `test_diff` changes.

    `read_base` reads a file at the base commit the diff was written against (None: absent).
    """
    cases = changed_cases(test_diff, read_base)
    return {test_id for test_id in report_ids for case in cases if case.owns(test_id)}


def base_test_ids(test_diff: str, read_base: ReadFile, report_ids: Iterable[str]) -> set[str]:
    """The ids of `report_ids` defined by a test case that already exists, at the base
    commit, in a file the diff touches: not new, whatever one run showed or missed."""
    cases: list[TestCase] = []
    for change in file_changes(test_diff, read_base):
        finder = _finder(change.old_path or "")
        if change.old_path is not None and finder is not None:
            cases += finder(change.old_path, change.old_text, read_base)
    return {test_id for test_id in report_ids for case in cases if case.owns(test_id)}
