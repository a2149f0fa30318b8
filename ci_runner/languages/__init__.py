"""The languages CI can run: one profile module each, registered here and nowhere else.

Everything CI knows of a language (the Debian packages and official image of its toolchain,
the version a repo asks for, what an environment build keeps for offline runs, how a derived
pipeline's tests are reported, where tripwires go and when one may fail) is one
`LanguageProfile`, in the language's module beside this one. The layers that apply the
knowledge (`ci_runner.images`, `.toolchains`, `.environments`, `.workflows`, `.tripwires`)
ask `profile_of(name)` and hold no branch on a language of their own.

The split across packages: `ci_runner` must not import `arena`, so this profile holds what a
CI run needs, and `arena.languages` holds what a task needs (which files are the language's,
which test ids a test patch owns), each arena profile naming this one. Adding a language is
a module here and one there, each registered in its package's `__init__`, and its member of
`arena.languages.Language`.

Profiles are loaded on first use, not at import: a profile takes its tripwire form and report
rule from the layers that apply them, and those layers import this registry. So the names
below are static, and no module asks for a profile while it is being imported.
"""

from __future__ import annotations

import importlib
from functools import cache

from ci_runner.languages.profile import LanguageProfile, TripwireForm

__all__ = [
    "LANGUAGES",
    "LanguageProfile",
    "TripwireForm",
    "UnknownLanguage",
    "find_profile",
    "profile_of",
    "profiles",
]

_MODULES = {
    "python": "ci_runner.languages.python",
    "go": "ci_runner.languages.golang",
    "rust": "ci_runner.languages.rust",
    "cpp": "ci_runner.languages.cpp",
}
LANGUAGES = tuple(_MODULES)


class UnknownLanguage(ValueError):
    """A language no profile is registered for."""


@cache
def _load(name: str) -> LanguageProfile:
    profile = getattr(importlib.import_module(_MODULES[name]), "PROFILE", None)
    if not isinstance(profile, LanguageProfile) or profile.name != name:
        raise TypeError(f"{_MODULES[name]}.PROFILE is not the LanguageProfile of {name!r}")
    return profile


def find_profile(name: str) -> LanguageProfile | None:
    """The profile of language `name`, or None when none is registered."""
    return _load(name) if name in _MODULES else None


def profile_of(name: str) -> LanguageProfile:
    """The profile of language `name`; UnknownLanguage naming the known ones if none."""
    if name not in _MODULES:
        raise UnknownLanguage(f"unknown language {name!r}; known: {', '.join(LANGUAGES)}")
    return _load(name)


def profiles() -> tuple[LanguageProfile, ...]:
    """Every registered profile, in registration order."""
    return tuple(_load(name) for name in LANGUAGES)
