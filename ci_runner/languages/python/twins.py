"""Twins of Python tests: a copy of a test the code under test has never seen, with the value
one of its assertions expects changed (swing-protocol.md, "tripwires").

A test and its twin cannot both pass: the twin asserts `== 4` where the test asserts `== 3`
on the same computation, `is False` where it asserts `is True`, `not x` where it asserts `x`.
So a run reporting both passed was rewritten by the code under test. To spare the twins while
it turns failures into passes, code would have to tell each twin from its test; both are in
the same file, one beside the other in random order, the twin named with words of the file's
own test names, so the one thing that tells them apart is which expected value is right:
knowing that is solving the issue.

A twin is made only of a test whose changed assertion is new in the diff the code has never
seen (a line it adds), and only of an assertion that runs whenever the test passes: a
statement of the test's own body, not under `if`, a loop or `with`, after no `return`. Tests
marked to be skipped or expected to fail are left alone, as are generators.
"""

from __future__ import annotations

import ast
import math
import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ci_runner.languages.twins import (
    MAX_TWINS,
    MadeTwin,
    Twin,
    changed_literal,
    drawn,
    module_stem,
    twin_name,
)

_EQUALITY = frozenset(
    {
        "assertEqual",
        "assertEquals",
        "assertListEqual",
        "assertTupleEqual",
        "assertDictEqual",
        "assertSetEqual",
        "assertSequenceEqual",
        "assertMultiLineEqual",
    }
)
_TRUTH = {"assertTrue": "assertFalse", "assertFalse": "assertTrue"}
_NOT_RUN = re.compile(r"xfail|skip|expectedFailure|expected_failure")
_WORD = re.compile(r"[a-z][a-z0-9]*")


@dataclass(frozen=True)
class _Edit:
    """Text to put in place of `line:col`..`end_line:end_col` (1-based lines, byte columns)."""

    line: int
    col: int
    end_line: int
    end_col: int
    text: str


def _mutable(node: ast.Constant) -> bool:
    value = node.value
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, int | str | bytes)  # bool is an int


def _constants(node: ast.expr) -> Iterator[ast.Constant]:
    """The constants of a value written out (a constant, signed or not, or a list, tuple,
    set or dict of them), in reading order; a dict's keys are left alone."""
    if isinstance(node, ast.Constant) and _mutable(node):
        yield node
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        yield from _constants(node.operand)
    elif isinstance(node, ast.List | ast.Tuple | ast.Set):
        for element in node.elts:
            yield from _constants(element)
    elif isinstance(node, ast.Dict):
        for value in node.values:
            yield from _constants(value)


def _literal(node: ast.expr) -> bool:
    """A value written out, with a constant a twin can change."""
    return next(_constants(node), None) is not None


def _expected_side(node: ast.stmt) -> ast.expr | None:
    """The written-out value an equality assertion expects, if it has one."""
    if isinstance(node, ast.Assert):
        test = node.test
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            left, right = test.left, test.comparators[0]
            if isinstance(test.ops[0], ast.Eq):
                return right if _literal(right) else left if _literal(left) else None
            if isinstance(test.ops[0], ast.Is) and isinstance(right, ast.Constant):
                return right if isinstance(right.value, bool) else None
        return None
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        call = node.value
        function = call.func
        if (
            isinstance(function, ast.Attribute)
            and function.attr in _EQUALITY
            and len(call.args) >= 2
        ):
            first, second = call.args[0], call.args[1]
            return second if _literal(second) else first if _literal(first) else None
    return None


def _negation(node: ast.stmt, source: Sequence[bytes]) -> _Edit | None:
    """The edit making a truth assertion (`assert x`, `assertTrue(x)`) assert the opposite."""
    if isinstance(node, ast.Assert):
        test = node.test
        if isinstance(test, ast.Compare | ast.BoolOp) or (
            isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        ):
            return None
        text = _span(source, test)
        bare = isinstance(test, ast.Call | ast.Name | ast.Attribute | ast.Subscript)
        negated = f"not {text}" if bare else f"not ({text})"
        return _Edit(test.lineno, test.col_offset, _end(test)[0], _end(test)[1], negated)
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        function = node.value.func
        if isinstance(function, ast.Attribute) and function.attr in _TRUTH:
            line, end = _end(function)  # `self.assertTrue`: the attribute's name ends it
            return _Edit(line, end - len(function.attr), line, end, _TRUTH[function.attr])
    return None


def _end(node: ast.AST) -> tuple[int, int]:
    end_line = getattr(node, "end_lineno", None)
    end_col = getattr(node, "end_col_offset", None)
    if end_line is None or end_col is None:
        raise ValueError("a node without an end position")
    return end_line, end_col


def _span(source: Sequence[bytes], node: ast.expr) -> str:
    end_line, end_col = _end(node)
    if node.lineno == end_line:
        return source[node.lineno - 1][node.col_offset : end_col].decode()
    parts = [source[node.lineno - 1][node.col_offset :]]
    parts += [source[n - 1] for n in range(node.lineno + 1, end_line)]
    parts.append(source[end_line - 1][:end_col])
    return b"".join(parts).decode()


def _lines_of(function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int]:
    """The first (its first decorator's) and last line of a function."""
    return min([function.lineno, *(d.lineno for d in function.decorator_list)]), _end(function)[0]


def _runs_whenever_it_passes(body: list[ast.stmt], index: int) -> bool:
    """No statement before `body[index]` can return early or make the test a generator."""
    for earlier in body[:index]:
        for node in ast.walk(earlier):
            if isinstance(node, ast.Return | ast.Yield | ast.YieldFrom):
                return False
    return True


def _candidate_edits(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    source: Sequence[bytes],
    added: set[int],
    rng: random.Random,
) -> list[_Edit]:
    """Edits each making a twin of `function`: an equality's expected value changed, else a
    truth assertion turned around; only for assertions on lines the diff adds."""
    if any(isinstance(n, ast.Yield | ast.YieldFrom) for n in ast.walk(function)):
        return []
    values: list[_Edit] = []
    truths: list[_Edit] = []
    for index, statement in enumerate(function.body):
        if statement.lineno not in added or not _runs_whenever_it_passes(function.body, index):
            continue
        expected = _expected_side(statement)
        if expected is not None:
            changes = [
                (constant, text)
                for constant in _constants(expected)
                if (text := changed_literal(_span(source, constant), constant.value, rng))
            ]
            if changes:
                constant, text = rng.choice(changes)
                end_line, end_col = _end(constant)
                values.append(_Edit(constant.lineno, constant.col_offset, end_line, end_col, text))
                continue
        if (negated := _negation(statement, source)) is not None:
            truths.append(negated)
    return values or truths


def _tests(
    tree: ast.Module,
) -> Iterator[tuple[str | None, ast.FunctionDef | ast.AsyncFunctionDef, set[str]]]:
    """(scope, test function, names taken in its scope) of the module's pytest and unittest
    tests: `test*` functions, and `test*` methods of `Test*` classes or TestCase subclasses."""
    module_names = {
        n.name
        for n in tree.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            yield None, node, module_names
        elif isinstance(node, ast.ClassDef) and _test_class(node):
            taken = {
                n.name for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
            }
            for member in node.body:
                if isinstance(
                    member, ast.FunctionDef | ast.AsyncFunctionDef
                ) and member.name.startswith("test"):
                    yield node.name, member, taken


def _test_class(node: ast.ClassDef) -> bool:
    if node.name.startswith("Test"):
        return True
    return any(ast.unparse(base).endswith("TestCase") for base in node.bases)


def _not_run(function: ast.FunctionDef | ast.AsyncFunctionDef, scope: ast.ClassDef | None) -> bool:
    decorators = [*function.decorator_list, *(scope.decorator_list if scope else [])]
    return any(_NOT_RUN.search(ast.unparse(d)) for d in decorators)


def _words(tree: ast.Module) -> list[str]:
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            found += [w for w in _WORD.findall(node.name) if w != "test" and len(w) > 2]
    return found


def make_twins(
    text: str,
    added: set[int],
    rng: random.Random,
    limit: int = MAX_TWINS,
    taken: frozenset[str] = frozenset(),
) -> tuple[str, list[MadeTwin]]:
    """The file with twins of up to `limit` of its tests (those whose assertions are on lines
    the diff added, in `added`), and the twins; the file unchanged when none can be made."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return text, []
    source = text.encode().splitlines(keepends=True)
    words = _words(tree)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    choices = []
    for scope, function, names in _tests(tree):
        if _not_run(function, classes.get(scope) if scope else None):
            continue
        edits = _candidate_edits(function, source, added, rng)
        if edits:
            names |= taken  # in place: twins of one scope share it, so none takes another's name
            choices.append((scope, function, names, rng.choice(edits)))
    lines = list(source)
    twins: list[MadeTwin] = []
    for scope, function, names, edit in drawn(choices, limit, rng, lambda c: c[1].lineno):
        name = twin_name(function.name, words, names, rng)
        names.add(name)
        copy = _twin_lines(source, function, edit, name)
        first, end_line = _lines_of(function)
        gap = [b"\n"] if scope else [b"\n", b"\n"]  # as black and flake8 space them
        if rng.random() < 0.5:  # before the test, or after it
            lines[first - 1 : first - 1] = [*copy, *gap]
        else:
            lines[end_line:end_line] = [*gap, *copy]
        twins.append(MadeTwin(scope, function.name, name))
    return b"".join(lines).decode(), twins[::-1]


def _twin_lines(
    source: Sequence[bytes],
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    edit: _Edit,
    name: str,
) -> list[bytes]:
    first, end_line = _lines_of(function)
    lines = [bytearray(line) for line in source[first - 1 : end_line]]
    if lines and not lines[-1].endswith(b"\n"):
        lines[-1] += b"\n"

    def at(line: int) -> bytearray:
        return lines[line - first]

    if edit.line == edit.end_line:
        row = at(edit.line)
        row[edit.col : edit.end_col] = edit.text.encode()
    else:
        head = bytes(at(edit.line)[: edit.col]) + edit.text.encode()
        tail = bytes(at(edit.end_line)[edit.end_col :])
        del lines[edit.line - first + 1 : edit.end_line - first + 1]
        lines[edit.line - first] = bytearray(head + tail)
    definition = at(function.lineno)
    keyword = b"async def " if isinstance(function, ast.AsyncFunctionDef) else b"def "
    where = definition.find(keyword + function.name.encode())
    if where < 0:
        raise ValueError(f"the definition of {function.name} is not on its line")
    start = where + len(keyword)
    definition[start : start + len(function.name)] = name.encode()
    return [bytes(line) for line in lines]


def original_of(twin: Twin, test_id: str) -> str | None:
    """The original's id when `test_id` is the twin's: pytest's `pkg.test_mod.Class::name[p]`
    (JUnit, or its console lines in that shape) or unittest's `pkg.test_mod.Class.name`."""
    separator = "::" if "::" in test_id else "."
    container, _, name = test_id.rpartition(separator)
    base, bracket, params = name.partition("[")
    if base != twin.twin or not container:
        return None
    expected = module_stem(twin.path) + (f".{twin.scope}" if twin.scope else "")
    if container != expected and not container.endswith(f".{expected}"):
        return None
    return f"{container}{separator}{twin.original}{bracket}{params}"
