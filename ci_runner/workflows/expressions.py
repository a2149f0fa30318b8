"""GitHub Actions expressions (`${{ ... }}`): a small parser and evaluator, linear time, no eval.

What a derived pipeline can know is modelled (matrix, env, runner, part of github, and the
status functions as if every earlier step succeeded); anything else raises `Unsupported`, so
the caller records it instead of leaving an expression in a command line.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

MAX_LENGTH = 10_000
MAX_DEPTH = 64


class ExpressionError(ValueError):
    """The expression is malformed."""


class Unsupported(ValueError):
    """The expression is well formed but needs something a derived pipeline cannot know."""


class PartialContext(dict[str, Any]):
    """A context of which only some properties are known: reading another one is Unsupported."""

    def __init__(self, name: str, values: Mapping[str, Any]) -> None:
        super().__init__(values)
        self.name = name


class OpenContext(PartialContext):
    """A context read as GitHub would: a property that is not known is null (falsey), and its
    name is recorded in `unknown` so the caller can say so. Nested mappings are open too."""

    def __init__(
        self, name: str, values: Mapping[str, Any], unknown: set[str] | None = None
    ) -> None:
        self.unknown: set[str] = set() if unknown is None else unknown
        super().__init__(
            name,
            {
                key: OpenContext(f"{name}.{key}", value, self.unknown)
                if isinstance(value, Mapping)
                else value
                for key, value in values.items()
            },
        )


# ---------------------------------------------------------------- tokens

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<number>0x[0-9a-fA-F]+|-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)
    | (?P<string>'(?:[^']|'')*')
    | (?P<name>[A-Za-z_][A-Za-z0-9_-]*)
    | (?P<op>==|!=|<=|>=|&&|\|\||[<>!()\[\].,*])
    )""",
    re.VERBOSE,
)


_SPACE = re.compile(r"\s*")


@dataclass(frozen=True)
class _Token:
    kind: str  # number, string, name, op, end
    text: str
    at: int


def _tokens(text: str) -> list[_Token]:
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"expression longer than {MAX_LENGTH} characters")
    out: list[_Token] = []
    at = 0
    while _SPACE.match(text, at).end() < len(text):  # type: ignore[union-attr]
        match = _TOKEN.match(text, at)
        if match is None or match.end() == at:
            raise ExpressionError(f"unexpected character {text[at]!r} at {at} in {text!r}")
        kind = match.lastgroup or "op"
        out.append(_Token(kind, match[kind], match.start(kind)))
        at = match.end()
    out.append(_Token("end", "", len(text)))
    return out


# ---------------------------------------------------------------- syntax tree


@dataclass(frozen=True)
class _Literal:
    value: Any


@dataclass(frozen=True)
class _Context:
    name: str


@dataclass(frozen=True)
class _Index:
    target: _Node
    keys: tuple[_Node | None, ...]  # None: the `.*` filter


@dataclass(frozen=True)
class _Call:
    name: str
    args: tuple[_Node, ...]


@dataclass(frozen=True)
class _Not:
    operand: _Node


@dataclass(frozen=True)
class _Chain:
    """`a op b op c ...` of one precedence level, kept flat so evaluation never recurses deep."""

    first: _Node
    rest: tuple[tuple[str, _Node], ...]


_Node = _Literal | _Context | _Index | _Call | _Not | _Chain

_KEYWORDS = {"true": True, "false": False, "null": None, "NaN": math.nan, "Infinity": math.inf}


class _Parser:
    """Recursive descent over the token list: each token is looked at a bounded number of times."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._tokens = _tokens(text)
        self._at = 0
        self._depth = 0

    def parse(self) -> _Node:
        node = self._or()
        if self._peek().kind != "end":
            self._fail(f"unexpected {self._peek().text!r}")
        return node

    def _peek(self) -> _Token:
        return self._tokens[self._at]

    def _take(self) -> _Token:
        token = self._tokens[self._at]
        self._at += 1
        return token

    def _accept(self, op: str) -> bool:
        token = self._peek()
        if token.kind == "op" and token.text == op:
            self._at += 1
            return True
        return False

    def _expect(self, op: str) -> None:
        if not self._accept(op):
            self._fail(f"expected {op!r}, found {self._peek().text or 'the end'!r}")

    def _fail(self, message: str) -> None:
        raise ExpressionError(f"{message} at {self._peek().at} in {self._text!r}")

    def _nested(self) -> None:
        self._depth += 1
        if self._depth > MAX_DEPTH:
            self._fail(f"nested deeper than {MAX_DEPTH}")

    def _chain(self, ops: tuple[str, ...], operand: Callable[[], _Node]) -> _Node:
        first = operand()
        rest: list[tuple[str, _Node]] = []
        while (token := self._peek()).kind == "op" and token.text in ops:
            self._take()
            rest.append((token.text, operand()))
        return _Chain(first, tuple(rest)) if rest else first

    def _or(self) -> _Node:
        return self._chain(("||",), self._and)

    def _and(self) -> _Node:
        return self._chain(("&&",), self._equality)

    def _equality(self) -> _Node:
        return self._chain(("==", "!="), self._comparison)

    def _comparison(self) -> _Node:
        return self._chain(("<", "<=", ">", ">="), self._unary)

    def _unary(self) -> _Node:
        if self._accept("!"):
            self._nested()
            node = _Not(self._unary())
            self._depth -= 1
            return node
        return self._postfix(self._primary())

    def _postfix(self, node: _Node) -> _Node:
        keys: list[_Node | None] = []
        while True:
            if self._accept("."):
                token = self._take()
                if token.kind == "op" and token.text == "*":
                    keys.append(None)
                elif token.kind == "name":
                    keys.append(_Literal(token.text))
                else:
                    self._at -= 1
                    self._fail("expected a property name after '.'")
            elif self._accept("["):
                self._nested()
                keys.append(None if self._accept("*") else self._or())
                self._expect("]")
                self._depth -= 1
            else:
                return _Index(node, tuple(keys)) if keys else node

    def _primary(self) -> _Node:
        token = self._take()
        if token.kind == "number":
            text = token.text
            return _Literal(float(int(text, 16)) if text.startswith("0x") else float(text))
        if token.kind == "string":
            return _Literal(token.text[1:-1].replace("''", "'"))
        if token.kind == "name":
            if token.text in _KEYWORDS:
                return _Literal(_KEYWORDS[token.text])
            if self._accept("("):
                self._nested()
                args: list[_Node] = []
                if not self._accept(")"):
                    args.append(self._or())
                    while self._accept(","):
                        args.append(self._or())
                    self._expect(")")
                self._depth -= 1
                return _Call(token.text.lower(), tuple(args))
            return _Context(token.text.lower())
        if token.kind == "op" and token.text == "(":
            self._nested()
            node = self._or()
            self._expect(")")
            self._depth -= 1
            return node
        self._at -= 1
        self._fail(f"unexpected {token.text or 'end of expression'!r}")
        raise AssertionError  # _fail raised


def parse(text: str) -> _Node:
    return _Parser(text).parse()


# ---------------------------------------------------------------- values


def truthy(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value != 0 and not math.isnan(value)
    if isinstance(value, str):
        return value != ""
    return True


def _number(value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return 0.0
        try:
            return float(int(text, 16)) if text.lower().startswith("0x") else float(text)
        except ValueError:
            return math.nan
    return math.nan


def number_text(value: float) -> str:
    """How GitHub (JavaScript) prints a number: 3.0 is `3`, 3.10 read as a float is `3.1`."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


def to_text(value: Any) -> str:
    """The string an expression's value becomes inside a command line or a name: GitHub
    prints an array as `Array` and an object as `Object` (use toJSON for their content)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return number_text(float(value))
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple):
        return "Array"
    if isinstance(value, Mapping):
        return "Object"
    return str(value)  # a YAML scalar of another type (a date): its text


def _json_value(value: Any) -> Any:
    """A value as toJSON writes it: numbers as JavaScript prints them (3.0 is 3), and a
    context of which only part is known cannot be written whole."""
    if isinstance(value, PartialContext):
        raise Unsupported(f"toJSON({value.name}): the whole context is not known")
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        number = float(value)
        if math.isnan(number) or math.isinf(number):
            return number_text(number)
        return int(number) if number == int(number) and abs(number) < 1e21 else number
    if isinstance(value, list | tuple):
        return [_json_value(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _json_value(v) for k, v in value.items()}
    return to_text(value)


def _to_json(value: Any) -> str:
    """GitHub's toJSON: pretty-printed with two spaces."""
    return json.dumps(_json_value(value), indent=2, ensure_ascii=False)


def _same(left: Any, right: Any) -> bool:
    """GitHub's loose equality: strings case-insensitive, other mixed types as numbers."""
    if isinstance(left, str) and isinstance(right, str):
        return left.lower() == right.lower()
    if isinstance(left, dict | list) or isinstance(right, dict | list):
        return left is right
    if type(left) is type(right) and not isinstance(left, int | float):
        return bool(left == right)
    return _number(left) == _number(right)


def _compare(op: str, left: Any, right: Any) -> bool:
    if isinstance(left, str) and isinstance(right, str):
        a: Any = left.lower()
        b: Any = right.lower()
    else:
        a, b = _number(left), _number(right)
        if math.isnan(a) or math.isnan(b):
            return False
    if op == "<":
        return bool(a < b)
    if op == "<=":
        return bool(a <= b)
    if op == ">":
        return bool(a > b)
    return bool(a >= b)


def _lookup(target: Any, key: Any) -> Any:
    if isinstance(target, list):
        index = _number(key)
        if math.isnan(index) or index != int(index) or not 0 <= index < len(target):
            return None
        return target[int(index)]
    if not isinstance(target, dict):
        return None
    name = to_text(key)
    for existing, value in target.items():
        if existing.lower() == name.lower():
            return value
    if isinstance(target, OpenContext):
        target.unknown.add(f"{target.name}.{name}")
        return None
    if isinstance(target, PartialContext):
        raise Unsupported(f"{target.name}.{name} is not known when deriving a pipeline")
    return None


def _children(value: Any) -> list[Any]:
    """What a `.*` filter yields of one value: an array's elements, an object's values."""
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return list(value.values())
    return []


def _format(template: str, *args: Any) -> str:
    out: list[str] = []
    at = 0
    while at < len(template):
        char = template[at]
        if template.startswith("{{", at) or template.startswith("}}", at):
            out.append(char)
            at += 2
        elif char == "{":
            end = template.find("}", at)
            index = template[at + 1 : end]
            if end < 0 or not index.isdigit() or int(index) >= len(args):
                raise ExpressionError(f"format(): bad placeholder in {template!r}")
            out.append(to_text(args[int(index)]))
            at = end + 1
        else:
            out.append(char)
            at += 1
    return "".join(out)


def _contains(search: Any, item: Any) -> bool:
    """An array holds an element equal to `item` (loose equality); anything else is searched
    as text, case-insensitively (an object's text is `Object`)."""
    if isinstance(search, list | tuple):
        return any(_same(element, item) for element in search)
    return to_text(item).lower() in to_text(search).lower()


def _join(items: Any, separator: Any = ",") -> str:
    """An array's elements as text between separators; any other value is its own text."""
    if isinstance(items, list | tuple):
        return to_text(separator).join(to_text(i) for i in items)
    return to_text(items)


def _from_json(text: Any) -> Any:
    try:
        return json.loads(to_text(text))
    except json.JSONDecodeError as exc:
        raise ExpressionError(f"fromJSON(): not JSON: {exc.msg}") from exc


def _case(*args: Any) -> Any:
    """`case(pred1, value1, pred2, value2, ..., default)`: the value after the first truthy
    predicate, else the default."""
    if len(args) % 2 == 0:
        raise ExpressionError("case() takes pairs of predicate and value, then a default")
    for predicate, value in zip(args[:-1:2], args[1:-1:2], strict=True):
        if truthy(predicate):
            return value
    return args[-1]


_FUNCTIONS: dict[str, tuple[int, int, Callable[..., Any]]] = {
    "case": (3, 255, _case),
    "contains": (2, 2, _contains),
    "startswith": (2, 2, lambda s, p: to_text(s).lower().startswith(to_text(p).lower())),
    "endswith": (2, 2, lambda s, p: to_text(s).lower().endswith(to_text(p).lower())),
    "format": (1, 64, lambda t, *a: _format(to_text(t), *a)),
    "join": (1, 2, _join),
    "tojson": (1, 1, _to_json),
    "fromjson": (1, 1, _from_json),
    # a derived pipeline runs a step only when every earlier one succeeded
    "success": (0, 0, lambda: True),
    "always": (0, 0, lambda: True),
    "failure": (0, 0, lambda: False),
    "cancelled": (0, 0, lambda: False),
}


class _Evaluator:
    def __init__(self, contexts: Mapping[str, Any]) -> None:
        self._contexts = {k.lower(): v for k, v in contexts.items()}

    def run(self, node: _Node) -> Any:
        if isinstance(node, _Literal):
            return node.value
        if isinstance(node, _Context):
            if node.name not in self._contexts:
                raise Unsupported(f"the {node.name} context is not known when deriving a pipeline")
            return self._contexts[node.name]
        if isinstance(node, _Index):
            return self._index(node)
        if isinstance(node, _Not):
            return not truthy(self.run(node.operand))
        if isinstance(node, _Chain):
            return self._chain(node)
        return self._call(node)

    def _index(self, node: _Index) -> Any:
        """Property and index reads; after a `.*` filter (an array's elements, an object's
        values) each read maps over the filtered items and keeps what is not null, as GitHub
        does (`github.event.pull_request.labels.*.name`)."""
        value = self.run(node.target)
        filtered = False
        for key in node.keys:
            if key is None:
                sources = value if filtered else [value]
                value = [child for source in sources for child in _children(source)]
                filtered = True
            elif filtered:
                name = self.run(key)
                value = [found for item in value if (found := _lookup(item, name)) is not None]
            else:
                value = _lookup(value, self.run(key))
        return value

    def _chain(self, node: _Chain) -> Any:
        value = self.run(node.first)
        for op, operand in node.rest:
            if op == "&&":
                if not truthy(value):
                    return value
                value = self.run(operand)
            elif op == "||":
                if truthy(value):
                    return value
                value = self.run(operand)
            elif op == "==":
                value = _same(value, self.run(operand))
            elif op == "!=":
                value = not _same(value, self.run(operand))
            else:
                value = _compare(op, value, self.run(operand))
        return value

    def _call(self, node: _Call) -> Any:
        if node.name not in _FUNCTIONS:
            raise Unsupported(f"the function {node.name}()")
        low, high, function = _FUNCTIONS[node.name]
        if not low <= len(node.args) <= high:
            raise ExpressionError(f"{node.name}() takes {low} to {high} arguments")
        return function(*(self.run(a) for a in node.args))


def evaluate(text: str, contexts: Mapping[str, Any]) -> Any:
    """The value of one expression (without its `${{ }}`)."""
    return _Evaluator(contexts).run(parse(text))


_OPEN = "${{"
_CLOSE = "}}"


def _expression_end(text: str, start: int) -> int:
    """Where the `}}` closing the expression opened at `start` is, skipping quoted strings."""
    at = start
    while at < len(text):
        if text[at] == "'":
            close = text.find("'", at + 1)
            while close >= 0 and text.startswith("''", close):
                close = text.find("'", close + 2)
            if close < 0:
                break
            at = close + 1
        elif text.startswith(_CLOSE, at):
            return at
        else:
            at += 1
    raise ExpressionError(f"unclosed ${{{{ in {text!r}")


def interpolate(text: str, contexts: Mapping[str, Any]) -> str:
    """`text` with every `${{ expr }}` replaced by its value as text."""
    out: list[str] = []
    at = 0
    while (start := text.find(_OPEN, at)) >= 0:
        end = _expression_end(text, start + len(_OPEN))
        out.append(text[at:start])
        out.append(to_text(evaluate(text[start + len(_OPEN) : end], contexts)))
        at = end + len(_CLOSE)
    out.append(text[at:])
    return "".join(out)


def condition(value: Any, contexts: Mapping[str, Any]) -> bool:
    """A job's or step's `if:`: an expression with or without `${{ }}`; absent is success()."""
    if value is None:
        return True
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return truthy(value)
    text = str(value).strip()
    if text.startswith(_OPEN) and text.endswith(_CLOSE) and text.count(_OPEN) == 1:
        text = text[len(_OPEN) : -len(_CLOSE)]
    elif _OPEN in text:
        return truthy(interpolate(text, contexts))
    return truthy(evaluate(text, contexts))
