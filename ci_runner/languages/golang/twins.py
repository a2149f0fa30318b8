"""Twins of Go tests: a copy of a test the code under test has never seen, with one of its
checks expecting another value (swing-protocol.md, "tripwires"; the Python form is
`ci_runner.languages.python.twins`).

Go tests check with `if` statements that fail the test (`if got != 3 { t.Errorf(...) }`,
`if !c.Contains("a") { t.Error(...) }`) and with testify (`assert.Equal(t, 3, got)`,
`require.True(t, ok)`). A twin changes the value such a check expects (3 becomes 1, 2, 4 or
5; a string's last character another of its kind; the `if`'s failure message saying the
new value where it said the old) or turns a truth check around, so a test and its twin
cannot both pass on any code. The twin sits beside its test, before or after it
at random, named with words of the file's test names, so only the expected value tells them
apart.

Read from gofmt-formatted text (Go's own style, which CI pipelines enforce), without a Go
parser: a test is `func TestX(t *testing.T) {` at the start of a line up to the first line
that is `}`; a check is changed only when it is a statement of the test's own body (one tab
in), on a line the unseen diff added, with no `return` before it in the test, an `if` whose
block only fails the test and has no `else`, or a testify call on one line. Anything else
is left alone: a file where no check fits gets no twin.
"""

from __future__ import annotations

import posixpath
import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from ci_runner.languages.twins import MAX_TWINS, MadeTwin, Twin, changed_literal, twins_in_lines

_TEST = re.compile(r"^func (?P<name>Test\w*)\((?P<t>\w+) \*testing\.T\) \{$")
_IF = re.compile(r"^\tif (?P<clause>.+) \{$")
_FAILS = re.compile(r"\w+\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\(")
_TESTIFY = re.compile(
    r"^\t(?P<module>assert|require)\.(?P<check>Equal|EqualValues|Equalf|EqualValuesf"
    r"|True|False|Truef|Falsef)\((?P<args>.*)\)$"
)
_TRUTH = {"True": "False", "False": "True", "Truef": "Falsef", "Falsef": "Truef"}
_LITERAL = re.compile(r'-?\d+(?:\.\d+)?|"[^"\\\n]*"')
_RETURN = re.compile(r"\breturn\b")
_CAMEL = re.compile(r"[A-Z][a-z0-9]*|[a-z0-9]+")
_TOKEN = re.compile(r"_|[A-Z][a-z0-9]*|[a-z0-9]+")
_DECLARED = re.compile(r"^(?:func|type|var|const)\s+(\w+)", re.MULTILINE)
_FILLERS = ("Case", "Value", "Result", "Basic", "Simple", "Again", "Other", "More")


class _Edit(NamedTuple):
    """A check's new text, and whether it moved the value the check expects (else it turned
    the truth it tests around): twins move values where they can. `moved` is the literal and
    what it became, for the failure's message to say the value the twin expects."""

    text: str
    moves_value: bool
    moved: tuple[str, str] | None = None


@dataclass(frozen=True)
class _Test:
    name: str
    t: str  # the name of its *testing.T
    first: int  # 0-based index of its `func` line
    last: int  # of its closing `}`


def _tests(lines: Sequence[str]) -> Iterator[_Test]:
    index = 0
    while index < len(lines):
        found = _TEST.match(lines[index])
        if found is None or found["name"][4:5].islower():  # `Testable` is no test
            index += 1
            continue
        end = next((n for n in range(index + 1, len(lines)) if lines[n] == "}"), None)
        if end is None:
            return
        yield _Test(found["name"], found["t"], index, end)
        index = end + 1


def _split_top(text: str, separator: str) -> list[str]:
    """`text` split at `separator` where no bracket, quote or rune literal is open."""
    parts: list[str] = []
    depth, quote, start, index = 0, "", 0, 0
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\" and quote != "`":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "\"'`":
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


def _primary(text: str) -> bool:
    """An operand with no operator outside brackets: `ok`, `c.Contains("a")`, `m[k].ok`."""
    try:
        return bool(text) and len(_split_top(text, " ")) == 1 and not text.startswith(("!", "-"))
    except ValueError:
        return False


def _changed_value(literal: str, rng: random.Random) -> str | None:
    value: object = literal[1:-1] if literal.startswith('"') else float(literal)
    if isinstance(value, float) and "." not in literal:
        value = int(literal)
    if isinstance(value, int | float) and value < 0:
        return None  # `changed_literal` keeps values at zero or above
    return changed_literal(literal, value, rng)


def _condition_edit(condition: str, rng: random.Random) -> _Edit | None:
    """The condition of a failing branch changed so it fires wherever the original's does
    not: its compared value moved, or the truth it tests turned around."""
    try:
        if len(_split_top(condition, "&&")) > 1 or len(_split_top(condition, "||")) > 1:
            return None
        sides = _split_top(condition, " != ")
    except ValueError:
        return None
    if len(sides) == 2:
        left, right = sides
        for index, side in ((1, right), (0, left)):
            if _LITERAL.fullmatch(side) and (changed := _changed_value(side, rng)):
                text = f"{left} != {changed}" if index == 1 else f"{changed} != {right}"
                return _Edit(text, moves_value=True, moved=(side, changed))
        return None
    if len(sides) != 1 or any(op in condition for op in ("==", "<", ">")):
        return None
    if condition.startswith("!") and _primary(condition[1:]):
        return _Edit(condition[1:], moves_value=False)
    return _Edit(f"!{condition}", moves_value=False) if _primary(condition) else None


def _only_fails(block: Sequence[str]) -> bool:
    """Every statement of an `if`'s block (two tabs in) fails the test."""
    statements = [line for line in block if line.startswith("\t\t") and line[2:3] not in "\t)}"]
    return bool(statements) and all(_FAILS.match(line[2:]) for line in statements)


def _if_edit(
    lines: Sequence[str], at: int, test: _Test, rng: random.Random
) -> tuple[_Edit, dict[int, str]] | None:
    """The `if`'s edit, and its lines as the twin has them: the condition changed, and the
    moved value changed in the block's failure message too. A message saying `want 4` where
    the twin's condition wants 5 would tell code that reads the failures (and rewrites
    them) that `got 4, want 4` is a twin, whose failure it could then leave alone."""
    found = _IF.match(lines[at])
    if found is None:
        return None
    end = next((n for n in range(at + 1, test.last) if lines[n].startswith("\t}")), None)
    if end is None or lines[end] != "\t}" or not _only_fails(lines[at + 1 : end]):
        return None
    try:
        parts = _split_top(found["clause"], "; ")
    except ValueError:
        return None
    if len(parts) > 2:
        return None
    changed = _condition_edit(parts[-1], rng)
    if changed is None:
        return None
    edit = changed._replace(text="\tif " + "; ".join([*parts[:-1], changed.text]) + " {")
    new_lines = {at: edit.text}
    if edit.moved is not None:
        old, value = edit.moved
        literal = re.compile(rf"(?<![\w.]){re.escape(old)}(?!\w|\.\d)")  # "want 4."
        for number in range(at + 1, end):
            new_lines[number] = literal.sub(lambda _: value, lines[number])
    return edit, new_lines


def _testify_edit(line: str, rng: random.Random) -> _Edit | None:
    found = _TESTIFY.match(line)
    if found is None:
        return None
    check = found["check"]
    head = f"\t{found['module']}."
    if check in _TRUTH:
        return _Edit(f"{head}{_TRUTH[check]}({found['args']})", moves_value=False)
    try:
        args = _split_top(found["args"], ", ")
    except ValueError:
        return None
    if len(args) < 3:
        return None
    for index in (1, 2):  # (t, expected, actual): the expected side, else a literal actual
        if _LITERAL.fullmatch(args[index]) and (changed := _changed_value(args[index], rng)):
            args[index] = changed
            return _Edit(f"{head}{check}({', '.join(args)})", moves_value=True)
    return None


def _candidate_edits(
    lines: Sequence[str], test: _Test, added: set[int], rng: random.Random
) -> list[dict[int, str]]:
    """The lines (by index) each twin of `test` changes, with their new text; values
    before truths."""
    values: list[dict[int, str]] = []
    truths: list[dict[int, str]] = []
    for at in range(test.first + 1, test.last):
        line = lines[at]
        if _RETURN.search(line):
            break  # what follows may not run whenever the test passes
        if at + 1 not in added or not line.startswith("\t") or line.startswith("\t\t"):
            continue
        if found := _if_edit(lines, at, test, rng):
            edit, changed = found
        elif testify := _testify_edit(line, rng):
            edit, changed = testify, {at: testify.text}
        else:
            continue
        (values if edit.moves_value else truths).append(changed)
    return values or truths


def twin_name(original: str, words: Sequence[str], taken: set[str], rng: random.Random) -> str:
    """A name for a test's twin as the file's tests are named (`TestGetMarksRecentlyUsed`,
    `TestParse_Empty`): a word of the file's test names added or swapped in, or one of the
    original's dropped, so neither length nor style tells a twin from its test; never a name
    taken, and always one `go vet` accepts (no lowercase letter right after `Test`)."""
    tokens = _TOKEN.findall(original[len("Test") :])
    spots = [i for i, token in enumerate(tokens) if token != "_"]
    pool = [w for w in dict.fromkeys(words) if w not in tokens] or list(_FILLERS)
    for _ in range(64):
        word = rng.choice(pool)
        choice = rng.randrange(4 if len(spots) > 2 else 3 if spots else 2)
        if choice == 0:
            changed = [*tokens, word]
        elif choice == 1:
            at = rng.randrange(len(tokens) + 1)
            changed = [*tokens[:at], word, *tokens[at:]]
        else:
            at = rng.choice(spots)
            changed = [*tokens[:at], *([word] if choice == 2 else []), *tokens[at + 1 :]]
        name = "Test" + "".join(changed)
        if name not in taken and name != original and not name[4:5].islower():
            return name
        pool = [*pool, *_FILLERS]
    raise ValueError(f"no free name for a twin of {original}")


def make_twins(
    text: str,
    added: set[int],
    rng: random.Random,
    limit: int = MAX_TWINS,
    taken: frozenset[str] = frozenset(),
) -> tuple[str, list[MadeTwin]]:
    """The file with twins of up to `limit` of its tests (those with a check on a line the
    diff added, 1-based in `added`), and the twins; `taken` are names declared beside the
    file in its package, which a twin must not take."""
    lines = text.split("\n")
    tests = list(_tests(lines))
    words = [w for t in tests for w in _CAMEL.findall(t.name[len("Test") :]) if len(w) > 2]
    names = set(taken) | set(_DECLARED.findall(text))
    choices = [
        (test, rng.choice(edits))
        for test in tests
        if (edits := _candidate_edits(lines, test, added, rng))
    ]

    def copy_of(test: _Test, edit: dict[int, str], name: str) -> list[str]:
        copy = lines[test.first : test.last + 1]
        for at, changed in edit.items():
            copy[at - test.first] = changed
        copy[0] = f"func {name}({test.t} *testing.T) {{"
        return copy

    twins = twins_in_lines(lines, choices, limit, rng, twin_name, words, names, copy_of)
    return "\n".join(lines), twins


def declared_beside(root: Path, path: str) -> frozenset[str]:
    """Names the other Go files of the file's directory declare at top level: a twin taking
    one would stop the package's tests from compiling."""
    directory = (root / path).parent
    names: set[str] = set()
    try:
        siblings = sorted(directory.glob("*.go"))
    except OSError:
        return frozenset()
    for sibling in siblings[:256]:
        if sibling.name == posixpath.basename(path) or not sibling.is_file():
            continue
        try:
            names.update(_DECLARED.findall(sibling.read_text(errors="replace")[: 1 << 20]))
        except OSError:
            continue
    return frozenset(names)


def original_of(twin: Twin, test_id: str) -> str | None:
    """The original's id when `test_id` is the twin's or one of its subtests'
    (`example.com/lru::TestTwin/case`), in the package of the twin's directory."""
    package, separator, name = test_id.partition("::")
    base, slash, rest = name.partition("/")
    if not separator or base != twin.twin:
        return None
    directory = posixpath.dirname(twin.path)
    if directory and package != directory and not package.endswith(f"/{directory}"):
        return None
    return f"{package}::{twin.original}{slash}{rest}"
