"""The languages a task can be in: one profile module each, registered here and nowhere else.

What a task needs to know of its language (which files are the language's, the aliases a
dataset uses, its tree-sitter grammar, how a test patch's changed test cases map to report
ids, which requirements a gold patch adds) is one `TaskProfile`, in the language's module
beside this one. What a CI run needs (toolchain image, version detection, environment build,
report rule, tripwire form) is the language's `ci_runner.languages` profile, which
`TaskProfile.ci` names: `ci_runner` must not import `arena`, so its knowledge cannot live
here. Adding a language is a `Language` member, a module here and one in
`ci_runner.languages`, each registered in its package's `__init__`; a test checks that every
member has both profiles.

As in `ci_runner.languages`, profiles are loaded on first use: a profile takes its case
finder from `arena.ownership`, which asks this registry for the finders.
"""

from __future__ import annotations

import importlib
from functools import cache

from arena.languages.profile import Language, TaskProfile

__all__ = ["Language", "TaskProfile", "language_named", "profiles", "task_profile"]

_MODULES = {
    Language.PYTHON: "arena.languages.python",
    Language.GO: "arena.languages.golang",
    Language.RUST: "arena.languages.rust",
    Language.CPP: "arena.languages.cpp",
}


@cache
def _load(language: Language) -> TaskProfile:
    profile = getattr(importlib.import_module(_MODULES[language]), "PROFILE", None)
    if not isinstance(profile, TaskProfile) or profile.language is not language:
        raise TypeError(f"{_MODULES[language]}.PROFILE is not the TaskProfile of {language}")
    return profile


def task_profile(language: Language | str) -> TaskProfile:
    """The profile of a language (a member, or its value; ValueError for another text)."""
    return _load(Language(language))


def profiles() -> tuple[TaskProfile, ...]:
    """Every registered profile, in registration order."""
    return tuple(_load(language) for language in _MODULES)


def language_named(name: str) -> Language | None:
    """A language named by text such as `Go`, `c++` or `golang`; None if none is."""
    lowered = name.strip().lower()
    for profile in profiles():
        if lowered == profile.language.value or lowered in profile.aliases:
            return profile.language
    return None
