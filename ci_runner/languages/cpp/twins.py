"""Twins of C and C++ tests: a copy of a test case the code under test has never seen, with
one of its checks expecting another value (swing-protocol.md, "tripwires"; the Python form
is `ci_runner.languages.python.twins`).

A twin needs a test its framework registers by itself, so that the copy runs as a case of
its own and the runner reads it by name (its binary split into cases, or ctest's discovery):
GoogleTest's `TEST(Suite, Name)` and `TEST_F`, doctest's and Catch2's `TEST_CASE("name")`.
A project's own harness (a table of functions, `add_test` per name) registers nothing by
itself: its files get no twin, and the generic C++ tripwire stands in. A twin changes the
value a check expects (`EXPECT_EQ(f(), 3)` expects 1, 2, 4 or 5; a string's last character
another of its kind; `CHECK(f() == 3)` the same) or turns a truth check around
(`EXPECT_TRUE` and `EXPECT_FALSE`, `CHECK` and `CHECK_FALSE`), so a test and its twin
cannot both pass on any code. It sits beside its test, before or after it at random, named
with words of the file's test names, so only the expected value tells them apart.

Read line by line, without a C++ parser: a test runs from its macro's line to the first
line that is its indentation and `}`; a check is changed only when it is one line, a
statement of the test's own body (no block open around it), on a line the unseen diff
added, with no `return` before it. Anything else is left alone.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ci_runner.languages.twins import MAX_TWINS, MadeTwin, Twin, changed_literal, twins_in_lines

_GTEST = re.compile(
    r"^(?P<indent>[ \t]*)(?P<macro>TEST|TEST_F)\(\s*(?P<suite>\w+)\s*,\s*(?P<name>\w+)\s*\)"
    r"\s*(?P<brace>\{?)\s*$"
)
_CASE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<macro>TEST_CASE|SCENARIO)\(\s*\"(?P<name>[^\"\\]+)\""
    r"(?P<tags>\s*,\s*\"[^\"\\]*\")?\s*\)\s*(?P<brace>\{?)\s*$"
)
_EQUALS = re.compile(
    r"^(?P<macro>(?:EXPECT|ASSERT)_(?:EQ|STREQ)|(?:CHECK|REQUIRE)_EQ)\((?P<args>.*)\);$"
)
_BOOLEAN = re.compile(
    r"^(?P<macro>(?:EXPECT|ASSERT)_(?:TRUE|FALSE)|(?:CHECK|REQUIRE)(?:_FALSE)?)\((?P<expr>.*)\);$"
)
_TURNED = {
    "EXPECT_TRUE": "EXPECT_FALSE",
    "EXPECT_FALSE": "EXPECT_TRUE",
    "ASSERT_TRUE": "ASSERT_FALSE",
    "ASSERT_FALSE": "ASSERT_TRUE",
    "CHECK": "CHECK_FALSE",
    "CHECK_FALSE": "CHECK",
    "REQUIRE": "REQUIRE_FALSE",
    "REQUIRE_FALSE": "REQUIRE",
}
_LITERAL = re.compile(r'-?\d+(?:\.\d+)?|"[^"\\\n]*"')
_QUOTED = re.compile(r"\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'")
_RETURN = re.compile(r"\breturn\b")
_TOKEN = re.compile(r"_|[A-Z]+(?![a-z])|[A-Z][a-z0-9]*|[a-z0-9]+")
_DECLARED = re.compile(
    r"\b(?:TEST|TEST_F)\(\s*(\w+)\s*,\s*(\w+)\s*\)|\b(?:TEST_CASE|SCENARIO)\(\s*\"([^\"\\]+)\""
)
_SOURCES = (".cpp", ".cc", ".cxx", ".c++")
_FILLERS = ("Case", "Value", "Result", "Basic", "Simple", "Again", "Other", "More")


@dataclass(frozen=True)
class _Test:
    name: str  # `Suite.Name` for GoogleTest, the case's text for doctest and Catch2
    first: int  # 0-based index of its macro's line
    last: int  # of its closing `}`
    body: int  # of its first body line
    header: str  # its macro's line(s), the name to be replaced
    spaced: bool  # named in words (doctest, Catch2), not an identifier


def _tests(lines: Sequence[str]) -> Iterator[_Test]:
    index = 0
    while index < len(lines):
        found = _GTEST.match(lines[index]) or _CASE.match(lines[index])
        if found is None:
            index += 1
            continue
        indent = found["indent"]
        body = index + 1
        if not found["brace"]:  # the brace on a line of its own
            if body >= len(lines) or lines[body].strip() != "{":
                index += 1
                continue
            body += 1
        end = next((n for n in range(body, len(lines)) if lines[n].rstrip() == f"{indent}}}"), None)
        if end is None:
            return
        spaced = found.re is _CASE
        name = found["name"] if spaced else f"{found['suite']}.{found['name']}"
        yield _Test(name, index, end, body, lines[index], spaced)
        index = end + 1


def _split_top(text: str, separator: str) -> list[str]:
    """`text` split at `separator` where no bracket or quote is open."""
    parts: list[str] = []
    depth, quote, start, index = 0, "", 0, 0
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif depth == 0 and text.startswith(separator, index):
            parts.append(text[start:index])
            start = index + len(separator)
            index = start
            continue
        index += 1
    if quote or depth:
        raise ValueError("unbalanced")
    parts.append(text[start:])
    return parts


def _moved(literal: str, rng: random.Random) -> str | None:
    """Another value written as `literal` is (a negative number stays negative)."""
    if literal.startswith('"'):
        return changed_literal(literal, literal[1:-1], rng)
    negative = literal.startswith("-")
    digits = literal.lstrip("-")
    value: int | float = float(digits) if "." in digits else int(digits)
    changed = changed_literal(digits, value, rng)
    if changed is None:
        return None
    return f"-{changed}" if negative and changed.strip("0.") else changed


def _value_edit(sides: list[str], rng: random.Random) -> list[str] | None:
    """The two sides with the literal one's value moved, when exactly one is a literal."""
    literal = [i for i, side in enumerate(sides) if _LITERAL.fullmatch(side.strip())]
    if len(sides) != 2 or len(literal) != 1:
        return None
    at = literal[0]
    moved = _moved(sides[at].strip(), rng)
    if moved is None:
        return None
    changed = list(sides)
    changed[at] = sides[at].replace(sides[at].strip(), moved)
    return changed


def _check_edit(statement: str, rng: random.Random) -> tuple[str, bool] | None:
    """A check's new text, and whether it moved a value (else it turned a truth around)."""
    try:
        if equals := _EQUALS.match(statement):
            sides = _value_edit(_split_top(equals["args"], ","), rng)
            return (f"{equals['macro']}({','.join(sides)});", True) if sides else None
        boolean = _BOOLEAN.match(statement)
        if boolean is None:
            return None
        macro, expr = boolean["macro"], boolean["expr"]
        _split_top(expr, ",")  # balanced, or no check this reader can change
        compared = _split_top(expr, " == ")
        if macro in ("CHECK", "REQUIRE", "EXPECT_TRUE", "ASSERT_TRUE") and len(compared) == 2:
            sides = _value_edit(compared, rng)
            if sides is not None:
                return f"{macro}({' == '.join(sides)});", True
        return f"{_TURNED[macro]}({expr});", False
    except ValueError:
        return None


def _depth_change(line: str) -> int:
    code = _QUOTED.sub('""', line).split("//", 1)[0]
    return code.count("{") - code.count("}")


def _candidate_edits(
    lines: Sequence[str], test: _Test, added: set[int], rng: random.Random
) -> list[tuple[int, str]]:
    """Each check a twin of `test` may change (its line's index, its new text); values
    before truths."""
    values: list[tuple[int, str]] = []
    truths: list[tuple[int, str]] = []
    indent: str | None = None
    depth = 0
    for at in range(test.body, test.last):
        line = lines[at]
        if not line.strip():
            continue
        if _RETURN.search(line):
            break  # what follows may not run whenever the test passes
        own = line[: len(line) - len(line.lstrip())]
        indent = own if indent is None else indent
        if depth == 0 and own == indent and at + 1 in added:
            edit = _check_edit(line.strip(), rng)
            if edit is not None:
                (values if edit[1] else truths).append((at, f"{indent}{edit[0]}"))
        depth += _depth_change(line)
        if depth < 0:
            break
    return values or truths


def twin_name(original: str, words: Sequence[str], taken: set[str], rng: random.Random) -> str:
    """A name for a test's twin as the file's tests are named: a word of the file's test
    names added or swapped in, or one of the original's dropped (`Suite.NameWord`; a
    case's text in words), so neither length nor style tells a twin from its test; never a
    name taken."""
    suite, dot, name = original.rpartition(".") if " " not in original else ("", "", original)
    spaced = " " in name or (not dot and name == name.lower() and "_" not in name)
    tokens = name.split(" ") if spaced else _TOKEN.findall(name)
    spots = [i for i, token in enumerate(tokens) if token != "_"]
    pool = [w for w in dict.fromkeys(words) if w not in tokens] or list(_FILLERS)
    for _ in range(64):
        word = rng.choice(pool)
        word = word.lower() if spaced else word[:1].upper() + word[1:]
        choice = rng.randrange(4 if len(spots) > 2 else 3 if spots else 2)
        if choice == 0:
            changed = [*tokens, word]
        elif choice == 1:
            at = rng.randrange(len(tokens) + 1)
            changed = [*tokens[:at], word, *tokens[at:]]
        else:
            at = rng.choice(spots)
            changed = [*tokens[:at], *([word] if choice == 2 else []), *tokens[at + 1 :]]
        joined = (" " if spaced else "").join(changed).strip("_ ")
        candidate = f"{suite}{dot}{joined}"
        valid = joined and (spaced or re.fullmatch(r"[A-Za-z_]\w*", joined))
        if valid and candidate not in taken and candidate != original:
            return candidate
        pool = [*pool, *_FILLERS]
    raise ValueError(f"no free name for a twin of {original}")


def _words(tests: Sequence[_Test]) -> list[str]:
    found: list[str] = []
    for test in tests:
        name = test.name if test.spaced else test.name.rpartition(".")[2]
        found += name.split(" ") if test.spaced else _TOKEN.findall(name)
    return [w for w in found if len(w) > 2 and w != "_"]


def _declared(text: str) -> set[str]:
    names: set[str] = set()
    for found in _DECLARED.finditer(text):
        names.add(found[3] if found[3] is not None else f"{found[1]}.{found[2]}")
    return names


def make_twins(
    text: str,
    added: set[int],
    rng: random.Random,
    limit: int = MAX_TWINS,
    taken: frozenset[str] = frozenset(),
) -> tuple[str, list[MadeTwin]]:
    """The file with twins of up to `limit` of its test cases (those with a check on a line
    the diff added, 1-based in `added`), and the twins; `taken` are case names declared
    beside the file, which a twin must not take."""
    lines = text.split("\n")
    tests = list(_tests(lines))
    names = set(taken) | _declared(text)
    choices = [
        (test, rng.choice(edits))
        for test in tests
        if (edits := _candidate_edits(lines, test, added, rng))
    ]

    def copy_of(test: _Test, edit: tuple[int, str], name: str) -> list[str]:
        copy = lines[test.first : test.last + 1]
        at, changed = edit
        copy[at - test.first] = changed
        old = test.name if test.spaced else test.name.rpartition(".")[2]
        new = name if test.spaced else name.rpartition(".")[2]
        quoted = f'"{old}"' if test.spaced else old
        replaced = f'"{new}"' if test.spaced else new
        copy[0] = test.header.replace(quoted, replaced, 1)
        return copy

    twins = twins_in_lines(lines, choices, limit, rng, twin_name, _words(tests), names, copy_of)
    return "\n".join(lines), twins


def declared_beside(root: Path, path: str) -> frozenset[str]:
    """Case names the other sources of the file's directory declare: a GoogleTest twin
    taking one would not link, a Catch2 one would stop its binary at start."""
    target = root / path
    names: set[str] = set()
    try:
        siblings = sorted(p for p in target.parent.iterdir() if p.suffix in _SOURCES)
    except OSError:
        return frozenset()
    for sibling in siblings[:256]:
        if sibling.name == target.name or not sibling.is_file():
            continue
        try:
            names |= _declared(sibling.read_text(errors="replace")[: 1 << 20])
        except OSError:
            continue
    return frozenset(names)


def original_of(twin: Twin, test_id: str) -> str | None:
    """The original's id when `test_id` is the twin's: `<ctest name>::<case>` for a binary
    split into its cases, the case alone for a ctest test of its own (discovered)."""
    binary, separator, case = test_id.rpartition("::")
    if case != twin.twin:
        return None
    return f"{binary}{separator}{twin.original}"
