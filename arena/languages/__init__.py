"""The languages a task can be in: one module each, named like the language's folder in
`ci_runner.languages`, whose registry (`LANGUAGE_FOLDERS`) is the only list of them.

What a task needs to know of its language (which files are the language's, the aliases a
dataset uses, its tree-sitter grammar and how a test patch's changed test cases map to
report ids, which requirements a gold patch adds) is one `TaskProfile`, in the language's
module beside this one, with its test-case finder. What a CI run needs (toolchain image,
version detection, environment build, report rule, tripwire form) is the language's
`ci_runner.languages` profile, which `TaskProfile.ci` names: `ci_runner` must not import
`arena`, so its knowledge cannot live here. `Language` is built from the same registry; a
test checks that every language has both profiles.

As in `ci_runner.languages`, profiles are loaded on first use; the modules beside this one
(`profile`, `cases`, `syntax`) are what a language's module builds on.
"""

from __future__ import annotations

import importlib
from functools import cache

from arena.languages.profile import Language, PatchRules, TaskProfile
from ci_runner import LANGUAGE_FOLDERS

__all__ = ["Language", "PatchRules", "TaskProfile", "language_named", "profiles", "task_profile"]

# each language's module: named like its folder in ci_runner.languages
_MODULES = {Language(name): f"{__name__}.{folder}" for name, folder in LANGUAGE_FOLDERS.items()}


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
