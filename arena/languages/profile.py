"""What a task knows of its language, beside what CI knows of it (`ci_runner.languages`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from ci_runner import LANGUAGE_FOLDERS, LanguageProfile, profile_of

if TYPE_CHECKING:  # the ownership package asks this registry for its finders
    from arena.languages.cases import CaseFinder


# the languages a task can be in, as `ci_runner.languages` registers them (each has a module
# in arena.languages named like its folder there); no docstring: the API's schema shows the
# enum as it is
Language = StrEnum(  # type: ignore[misc]  # built from the registry, not written out
    "Language", {name.upper(): name for name in LANGUAGE_FOLDERS}
)


# (a path, its text) -> the 1-based line spans of its test-only code or settings, in a file
# shared with the code (a `#[cfg(test)]` module, a `[tool.pytest]` section); None: not a
# file the language reads so
TestSpans = Callable[[str, str], "list[tuple[int, int]] | None"]


@dataclass(frozen=True)
class PatchRules:
    """What of a submitter's patch is the language's test code or test infrastructure, dropped
    before the gold tests run (P'), and how its files take the comment line of a neutral
    change (N(P')): `arena.patch_scope` joins every language's with the generic rules."""

    # the path's parts (folders, then the file) shadow the language's test tools (a
    # `pytest.py`, a package named like one pytest imports)
    shadows_tool: Callable[[Sequence[str]], bool] | None = None
    test_config: frozenset[str] = frozenset()  # names of files that configure its tests
    harness: re.Pattern[str] | None = None  # its test frameworks' own files, vendored or not
    test_files: re.Pattern[str] | None = None  # names of its test files
    test_spans: TestSpans | None = None
    comments: Mapping[str, str | None] = field(default_factory=dict)  # ending -> line comment
    comments_by_name: Mapping[str, str] = field(default_factory=dict)  # file name -> comment


@dataclass(frozen=True)
class TaskProfile:
    """One language's task-side rules: which files are the language's (a gold patch touching
    none was mislabelled), how its test files are parsed, which report ids a test case owns."""

    language: Language
    aliases: tuple[str, ...]  # other names a dataset gives it (`golang`, `c++`)
    source_suffixes: tuple[str, ...]  # lower-case file name endings of its sources
    # build files of the language: a fix that bumps a module or a compile flag is the language's
    manifests: tuple[str, ...]  # file names
    manifest_suffixes: tuple[str, ...]  # lower-case file name endings (`.cmake`)
    grammar: Callable[[], object]  # the tree-sitter grammar its test files are parsed with
    test_suffixes: tuple[str, ...]  # files whose test cases `find_cases` reads
    find_cases: CaseFinder
    # the requirements a gold patch adds, fetched for offline runs; None: the language's
    # environment build keeps what the repo's own files ask for only
    added_requirements: Callable[[str], tuple[str, ...]] | None = None
    patch_rules: PatchRules = PatchRules()
    # a test's or a function's definition on a line (its name: the first group that matched),
    # for telling whether a run's output names the tests (arena.tasks.unnamed_tests)
    definitions: tuple[re.Pattern[str], ...] = ()

    @property
    def ci(self) -> LanguageProfile:
        """The language's CI profile, by the same name."""
        return profile_of(self.language.value)

    def is_language_file(self, path: str) -> bool:
        name = path.rsplit("/", 1)[-1]
        lowered = name.lower()
        return (
            lowered.endswith(self.source_suffixes + self.manifest_suffixes)
            or name in self.manifests
        )
