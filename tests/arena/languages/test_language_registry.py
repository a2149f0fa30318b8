"""The task-side language registry: every Language member has a complete profile, and a CI
profile by the same name."""

from __future__ import annotations

import pytest
from tree_sitter import Language as Grammar
from tree_sitter import Parser

from arena.languages import Language, TaskProfile, language_named, profiles, task_profile
from ci_runner.languages import LANGUAGES


@pytest.fixture(params=list(Language))
def profile(request: pytest.FixtureRequest) -> TaskProfile:
    return task_profile(request.param)


def test_every_language_has_a_task_profile_and_a_ci_profile() -> None:
    assert [p.language for p in profiles()] == list(Language)
    assert {language.value for language in Language} == set(LANGUAGES)
    assert all(task_profile(language).ci.name == language.value for language in Language)


def test_each_name_and_alias_names_one_language() -> None:
    names = [name for p in profiles() for name in (p.language.value, *p.aliases)]
    assert len(names) == len(set(names))
    for p in profiles():
        for name in (p.language.value, *p.aliases):
            assert language_named(f" {name.upper()} ") is p.language
    assert language_named("cobol") is None


def test_a_profile_knows_its_files(profile: TaskProfile) -> None:
    assert profile.source_suffixes
    assert all(s == s.lower() for s in (*profile.source_suffixes, *profile.manifest_suffixes))
    assert all(profile.is_language_file(f"src/x{s}") for s in profile.source_suffixes)
    assert all(profile.is_language_file(f"a/{m}") for m in profile.manifests)
    assert set(profile.test_suffixes) <= set(profile.source_suffixes)
    others = [p for p in profiles() if p is not profile]
    assert not any(p.is_language_file(f"x{profile.source_suffixes[0]}") for p in others)


def test_a_profile_parses_its_test_files(profile: TaskProfile) -> None:
    root = Parser(Grammar(profile.grammar())).parse(b"").root_node
    assert root.child_count == 0
    for suffix in profile.test_suffixes:
        assert profile.find_cases(f"t/x{suffix}", "", lambda _: None) == []
