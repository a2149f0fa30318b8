"""Twins of Rust tests: a copy of a test the code under test has never seen, with one of its
assertions expecting another value (swing-protocol.md, "tripwires"; the Python form is
`ci_runner.languages.python.twins`, the Go form `ci_runner.languages.golang.twins`).

A twin changes a value written out in an `assert_eq!` (a number moved by one or two, a
string's last character another of its kind, `true` and `false` swapped; in the second
argument, where the expected value usually is, else the first), or turns an `assert!`
around (`x` and `!x`, `==` and `!=`), so a test and its twin cannot both pass. It sits beside
its test, before or after it at random, named with words of the file's test names; the
copy keeps its test's layout line for line, so only the value tells them apart.

Read from rustfmt-formatted text without a Rust parser: a test is a `fn name() {` under a
`#[test]` (or `#[tokio::test]`-style) attribute, up to the first line that closes it at its
own indent. An assertion is changed only when it is a statement of the test's own body, on
lines the unseen diff added, with no `return` or `?` before it in the test; tests marked
`#[should_panic]` or `#[ignore]` are left alone. Anything else gets no twin.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ci_runner.languages.twins import (
    MAX_TWINS,
    MadeTwin,
    Twin,
    changed_literal,
    twin_name,
    twins_in_lines,
)

_ATTRIBUTE = re.compile(r"^(?P<indent> *)#\[")
_TEST_ATTRIBUTE = re.compile(r"#\[(?:\w+::)*test\b")
_NOT_RUN = re.compile(r"#\[(?:should_panic|ignore)\b")
_FN = re.compile(r"^(?P<indent> *)(?:async )?fn (?P<name>\w+)\(\) \{$")
_DECLARED = re.compile(r"\bfn\s+(\w+)")
_WORD = re.compile(r"[a-z][a-z0-9]*")
_EARLY_EXIT = re.compile(r"\breturn\b|[\w)\]]\?(?!\w)")
_MACRO = re.compile(r"^(?P<indent> *)(?P<macro>assert_eq|assert)!\(")
_TOKEN = re.compile(
    r"(?P<raw>b?r(?P<hashes>#*)\"[\s\S]*?\"(?P=hashes))"
    r"|(?P<text>b?\"(?:[^\"\\]|\\[\s\S])*\")"
    r"|(?P<char>b?'(?:[^'\\\n]|\\[^\n]{1,10})')"
    r"|(?P<number>(?<![\w.])\d+(?:\.\d+)?(?![\w.]))"
    r"|(?P<truth>\b(?:true|false)\b)"
    r"|(?P<open>[(\[{])|(?P<close>[)\]}])|(?P<comma>,)"
    r"|(?P<compare>==|!=|<=|>=|&&|\|\|)"
)


# a call that computes: a method, or a function not reached through a type's path
_COMPUTED = re.compile(r"\.\s*[a-z_]\w*\s*[(:]|(?<![\w:])[a-z_]\w*\s*\(")
_KEPT = ("open", "close", "comma", "compare", "number", "truth")


@dataclass(frozen=True)
class _Test:
    name: str
    indent: str
    first: int  # 0-based index of its first attribute line
    fn: int  # of its `fn` line
    last: int  # of its closing brace


def _tests(lines: Sequence[str]) -> Iterator[_Test]:
    index = 0
    while index < len(lines):
        found = _FN.match(lines[index])
        if found is None:
            index += 1
            continue
        indent = found["indent"]
        first = index
        while (
            first > 0
            and (above := _ATTRIBUTE.match(lines[first - 1]))
            and (above["indent"] == indent)
        ):
            first -= 1
        attributes = lines[first:index]
        closing = indent + "}"
        last = next((n for n in range(index + 1, len(lines)) if lines[n] == closing), None)
        if last is None:
            return
        if any(_TEST_ATTRIBUTE.search(a) for a in attributes) and not any(
            _NOT_RUN.search(a) for a in attributes
        ):
            yield _Test(found["name"], indent, first, index, last)
        index = last + 1


@dataclass(frozen=True)
class _Token:
    kind: str
    start: int
    end: int
    text: str


def _tokens(text: str) -> list[_Token]:
    return [_Token(m.lastgroup or "", m.start(), m.end(), m.group()) for m in _TOKEN.finditer(text)]


@dataclass(frozen=True)
class _Argument:
    start: int
    end: int
    tokens: tuple[tuple[_Token, int], ...]  # each with its depth (1: the argument's level)


def _arguments(text: str, opening: int) -> list[_Argument] | None:
    """The arguments of the macro whose `(` is at `opening`, or None when its parentheses do
    not close in `text`."""
    arguments: list[_Argument] = []
    tokens: list[tuple[_Token, int]] = []
    depth, start = 0, opening + 1
    for token in _tokens(text):
        if token.start < opening:
            continue
        if token.kind == "open":
            depth += 1
            if depth == 1:
                continue
        elif token.kind == "close":
            depth -= 1
            if depth == 0:
                if text[start : token.start].strip():
                    arguments.append(_Argument(start, token.start, tuple(tokens)))
                return arguments
        elif token.kind == "comma" and depth == 1:
            arguments.append(_Argument(start, token.start, tuple(tokens)))
            tokens, start = [], token.end
            continue
        tokens.append((token, depth))
    return None


def _changed_value(token: _Token, rng: random.Random) -> str | None:
    if token.kind == "truth":
        return "false" if token.text == "true" else "true"
    if token.kind == "number":
        value: float = float(token.text) if "." in token.text else int(token.text)
        return changed_literal(token.text, value, rng)
    if token.kind == "text" and not token.text.startswith("b") and "\\" not in token.text:
        return changed_literal(token.text, token.text[1:-1], rng)
    return None


def _written_out(statement: str, argument: _Argument) -> bool:
    """Whether an argument is a value written out (`vec!["a", ""]`, `Some(3)`,
    `Ok(Duration::from_millis(250))`) rather than computed (`parse("250ms")`, `x.len()`):
    the expected side, whose value a twin changes; changing an input instead may leave the
    result as it was (an error found before the changed part)."""
    text = _TOKEN.sub(
        lambda m: m.group() if m.lastgroup in _KEPT else '""',
        statement[argument.start : argument.end],
    )
    return _COMPUTED.search(text) is None


def _value_edit(statement: str, rng: random.Random) -> str | None:
    """`assert_eq!` with one value written out in its expected argument changed."""
    found = _MACRO.match(statement)
    if found is None or found["macro"] != "assert_eq":
        return None
    arguments = _arguments(statement, found.end() - 1)
    if arguments is None or len(arguments) < 2:
        return None
    for argument in (arguments[1], arguments[0]):
        if not _written_out(statement, argument):
            continue
        changes = [
            (t, new) for t, _ in argument.tokens if (new := _changed_value(t, rng)) is not None
        ]
        if changes:
            token, new = rng.choice(changes)
            return statement[: token.start] + new + statement[token.end :]
    return None


def _truth_edit(statement: str) -> str | None:
    """`assert!` of a bare value, its negation or one comparison, turned around."""
    found = _MACRO.match(statement)
    if found is None or found["macro"] != "assert":
        return None
    arguments = _arguments(statement, found.end() - 1)
    if arguments is None or len(arguments) != 1:
        return None
    compares = [(t, depth) for t, depth in arguments[0].tokens if t.kind == "compare"]
    if len(compares) == 1 and compares[0][1] == 1 and compares[0][0].text in ("==", "!="):
        token = compares[0][0]
        turned = "!=" if token.text == "==" else "=="
        return statement[: token.start] + turned + statement[token.end :]
    if compares:
        return None
    start, end = arguments[0].start, arguments[0].end
    inner = statement[start:end]
    if "\n" in inner or " " in inner.strip().lstrip("!"):
        return None  # not a bare value: `!` before it would not read as a test's own check
    body = inner.strip()
    turned = body[1:] if body.startswith("!") else f"!{body}"
    return statement[:start] + inner.replace(body, turned, 1) + statement[end:]


def _statement_end(lines: Sequence[str], at: int, test: _Test, indent: str) -> int | None:
    """The last line of the macro statement starting at `at`: itself, or the `);` that
    closes it at its own indent."""
    if lines[at].endswith(");"):
        return at
    closing = indent + ");"
    return next((n for n in range(at + 1, test.last) if lines[n] == closing), None)


def _candidate_edits(
    lines: Sequence[str], test: _Test, added: set[int], rng: random.Random
) -> list[tuple[int, int, str]]:
    """(first line, last line, the statement's new text) each making a twin of `test`."""
    body = test.indent + "    "
    values: list[tuple[int, int, str]] = []
    truths: list[tuple[int, int, str]] = []
    at = test.fn + 1
    while at < test.last:
        line = lines[at]
        if _EARLY_EXIT.search(line):
            break  # what follows may not run whenever the test passes
        found = _MACRO.match(line)
        if found is None or found["indent"] != body:
            at += 1
            continue
        end = _statement_end(lines, at, test, body)
        if end is None:
            break
        if any(n in added for n in range(at + 1, end + 2)):  # 1-based
            statement = "\n".join(lines[at : end + 1])
            if (changed := _value_edit(statement, rng)) is not None:
                values.append((at, end, changed))
            elif (turned := _truth_edit(statement)) is not None:
                truths.append((at, end, turned))
        at = end + 1
    return values or truths


def make_twins(
    text: str,
    added: set[int],
    rng: random.Random,
    limit: int = MAX_TWINS,
    taken: frozenset[str] = frozenset(),
) -> tuple[str, list[MadeTwin]]:
    """The file with twins of up to `limit` of its tests (those with an assertion on lines
    the diff added, 1-based in `added`), and the twins; none takes a name in `taken` or one
    the file declares."""
    lines = text.split("\n")
    tests = list(_tests(lines))
    words = [w for t in tests for w in _WORD.findall(t.name) if len(w) > 2]
    names = set(taken) | set(_DECLARED.findall(text))
    choices = [
        (test, rng.choice(edits))
        for test in tests
        if (edits := _candidate_edits(lines, test, added, rng))
    ]

    def copy_of(test: _Test, edit: tuple[int, int, str], name: str) -> list[str]:
        at, end, changed = edit
        copy = [*lines[test.first : at], *changed.split("\n"), *lines[end + 1 : test.last + 1]]
        fn = test.fn - test.first
        copy[fn] = copy[fn].replace(f"fn {test.name}()", f"fn {name}()", 1)
        return copy

    twins = twins_in_lines(lines, choices, limit, rng, twin_name, words, names, copy_of)
    return "\n".join(lines), twins


def original_of(twin: Twin, test_id: str) -> str | None:
    """The original's id when `test_id` is the twin's: libtest's `tests/units.rs::name` or
    `src/lib.rs::parse::tests::name`, the twin's name last."""
    container, separator, name = test_id.rpartition("::")
    if not separator or name != twin.twin:
        return None
    return f"{container}::{twin.original}"
