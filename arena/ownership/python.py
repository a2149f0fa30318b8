"""Python test functions and methods, and their pytest ids (node ids or JUnit `classname::name`).

pytest's JUnit report names a test `tests.test_x.TestC::test_m[1-2]`: the file's path from the
rootdir dotted, the classes, then the name with its parameters. Every parametrization of a
changed function is its own; a change outside any function (a helper class's setUp, a module
constant) belongs to no test.
"""

from __future__ import annotations

import posixpath
from functools import partial

from tree_sitter import Node

from arena.ownership.cases import ReadFile, TestCase
from arena.ownership.syntax import first_line, last_line, parse, text


def split_pytest_id(test_id: str) -> tuple[str, str] | None:
    """(dotted module and classes, function name) of a pytest id in either form."""
    base = test_id.partition("[")[0]
    parts = base.split("::")
    if len(parts) < 2:
        return None
    head = parts[0]
    if head.endswith(".py"):  # a node id: tests/test_x.py::TestC::test_m
        return ".".join([head[:-3].replace("/", "."), *parts[1:-1]]), parts[-1]
    return ".".join(parts[:-1]), parts[-1]


def _owns(module: tuple[str, ...], classes: tuple[str, ...], name: str, test_id: str) -> bool:
    split = split_pytest_id(test_id)
    if split is None or split[1] != name:
        return False
    return any(split[0] == ".".join(module[k:] + classes) for k in range(len(module)))


def _walk(
    node: Node, module: tuple[str, ...], classes: tuple[str, ...], out: list[TestCase]
) -> None:
    for child in node.named_children:
        target = (
            child.child_by_field_name("definition")
            if child.type == "decorated_definition"
            else child
        )
        if target is None:
            continue
        name = text(target.child_by_field_name("name"))
        if target.type == "class_definition":
            body = target.child_by_field_name("body")
            if body is not None:
                _walk(body, module, (*classes, name), out)
        elif target.type == "function_definition":
            label = "::".join((*classes, name))
            out.append(
                TestCase(
                    label,
                    first_line(child),
                    last_line(child),
                    partial(_owns, module, classes, name),
                )
            )


def python_cases(path: str, source: str, read_file: ReadFile) -> list[TestCase]:
    stem = posixpath.splitext(path)[0]
    module = tuple(part for part in stem.split("/") if part)
    cases: list[TestCase] = []
    _walk(parse("python", source), module, (), cases)
    return cases
