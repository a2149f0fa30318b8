"""Shell text as the language plug-ins and the workflow rules read it: logical lines, and a
runner's argument list word by word. Pure, and blind to any tool's name."""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable
from typing import NamedTuple

MAX_LINE = 4096


def line_groups(script: str) -> list[tuple[int, str]]:
    """(index of the raw line after it, logical line) for each shell line, continuations joined."""
    groups: list[tuple[int, str]] = []
    pending: list[str] = []
    raw_lines = script.splitlines()
    for index, raw in enumerate(raw_lines):
        line = raw[:MAX_LINE].rstrip()
        if line.endswith("\\") and index + 1 < len(raw_lines):
            pending.append(line[:-1])
            continue
        pending.append(line.removesuffix("\\"))
        groups.append((index + 1, " ".join(p.strip() for p in pending).strip()[:MAX_LINE]))
        pending = []
    return groups


def logical_lines(script: str) -> list[str]:
    """Shell lines with backslash continuations joined, stripped, each capped at MAX_LINE."""
    return [line for _, line in line_groups(script) if line]


_VARIABLE = re.compile(r"\$(?:\([^)]*\)|\{[^}]*\}|\w+)")


def shell_words(args: str) -> tuple[list[str], bool] | None:
    """The arguments as the shell splits them, without the variables and substitutions
    (`$(TESTFLAGS)`, `${PKGS}`), and whether there were any; None where they cannot be split."""
    if "`" in args:
        return None
    plain, variables = _VARIABLE.subn(" ", args)
    try:
        return shlex.split(plain, comments=True), variables > 0
    except ValueError:
        return None


class Word(NamedTuple):
    """One word of an argument list: an option (`name`: how the runner spells it, `value`:
    the next word when that is its value) or a positional word (`name` None)."""

    name: str | None
    text: str
    value: tuple[str, ...] = ()


def _option_name(word: str) -> str:
    return word.split("=", 1)[0]


def arguments(
    words: list[str],
    value_flags: frozenset[str],
    name_of: Callable[[str], str] = _option_name,
) -> list[Word]:
    """The argument list read word by word, an option's value with it (`--`, which ends
    the options, left out)."""
    read: list[Word] = []
    at = 0
    while at < len(words):
        word = words[at]
        at += 1
        if word == "--":
            continue
        if not word.startswith("-"):
            read.append(Word(None, word))
            continue
        name = name_of(word)
        takes_value = "=" not in word and name in value_flags and at < len(words)
        read.append(Word(name, word, (words[at],) if takes_value else ()))
        at += 1 if takes_value else 0
    return read


def positionals(words: list[str], value_flags: frozenset[str]) -> tuple[list[str], list[str]]:
    """(positional words, flags with their values) of an argument list."""
    read = arguments(words, value_flags, name_of=lambda word: word)
    positional = [w.text for w in read if w.name is None]
    return positional, [part for w in read if w.name is not None for part in (w.text, *w.value)]


def _under(path: str, folder: str) -> bool:
    folder = posixpath.normpath(folder)
    return folder in ("", ".") or path == folder or path.startswith(f"{folder}/")


def under(path: str, folder: str) -> bool:
    """Whether `path` lies in `folder` (both relative to the repository; `.` is all of it)."""
    folder = posixpath.normpath(folder)
    return folder in ("", ".") or path == folder or path.startswith(f"{folder}/")
