"""The languages CI can run: one folder each beside this module, registered in LANGUAGE_FOLDERS.

Everything CI knows of a language (the Debian packages and official image of its toolchain,
the version a repo asks for, what an environment build keeps for offline runs, which of a
step's commands run its tests, how a derived pipeline's tests are reported, which gold
tests a runner line reaches, where tripwires go and when one may fail, its twins) is one
`LanguageProfile`, in the `__init__` of the language's folder, with the modules it needs
beside it (`tripwires`, `twins`, `scope`). The layers that apply the knowledge
(`ci_runner.images`, `.toolchains`, `.environments`, `.workflows`, `.tripwires`) ask
`profile_of(name)` or `profiles()` and hold no branch and no table of a language of their
own. The modules beside this one (`profile`, `toolchain`, `sites`, `twins`, `reporting`,
`shell`, `scope`) are what a language's folder builds on; they import no layer above.

The split across packages: `ci_runner` must not import `arena`, so this profile holds what a
CI run needs, and `arena.languages` holds what a task needs (which files are the language's,
its test conventions, which test ids a test patch owns), in the module named like the
folder here. Adding a language is its folder here, its module there, and its line in
LANGUAGE_FOLDERS; `arena.languages.Language` is built from LANGUAGE_FOLDERS.

Profiles are loaded on first use, not at import: the layers that apply them import this
registry, and a language's folder imports nothing above it.
"""

from __future__ import annotations

import importlib
from functools import cache

from ci_runner.languages.profile import CommandWords, LanguageProfile, TripwireForm

__all__ = [
    "LANGUAGES",
    "LANGUAGE_FOLDERS",
    "CommandWords",
    "LanguageProfile",
    "TripwireForm",
    "UnknownLanguage",
    "find_profile",
    "profile_of",
    "profiles",
]

# a language's name -> its folder beside this module, and its module in `arena.languages`:
# the one line a language adds outside its own files
LANGUAGE_FOLDERS: dict[str, str] = {
    "python": "python",
    "go": "golang",
    "rust": "rust",
    "cpp": "cpp",
    "java": "java",
}
LANGUAGES = tuple(LANGUAGE_FOLDERS)
_MODULES = {name: f"{__name__}.{folder}" for name, folder in LANGUAGE_FOLDERS.items()}


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
