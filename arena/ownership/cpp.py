"""C++ test cases and their ctest names.

ctest names come from the build, not the source, so a case is matched by the names test
frameworks give it: `TEST(name)`/`TEST(Suite, Name)` (gtest's `Suite.Name`, with `Prefix/`
and `/N` of parameterized tests), `TEST_CASE("name")` (doctest, Catch2), and a plain function
whose name is the test's (a hand-written registry, as in the cpp demo tasks). Only
declarations at file, namespace or test-suite level are cases: a SUBCASE or SECTION belongs to
its TEST_CASE.
"""

from __future__ import annotations

import re
from functools import partial

from tree_sitter import Node

from arena.ownership.cases import ReadFile, TestCase
from arena.ownership.syntax import first_line, last_line, parse, text

_CONTAINERS = {"TEST_SUITE", "TEST_SUITE_BEGIN", "extern"}
_PREFIXES = {"SCENARIO": "Scenario: ", "SCENARIO_METHOD": "Scenario: "}


def _owns(name: str, test_id: str) -> bool:
    dotted = test_id.replace("::", ".")
    pattern = r"(?:.*/)?" + re.escape(name) + r"(?:/\d+)?"
    return test_id == name or re.fullmatch(pattern, dotted) is not None


def _string(node: Node) -> str | None:
    if node.type in ("string_literal", "raw_string_literal"):
        return "".join(text(c) for c in node.named_children if c.type == "string_content")
    for child in node.named_children:
        found = _string(child)
        if found is not None:
            return found
    return None


def _function_name(definition: Node) -> str | None:
    declarator = definition.child_by_field_name("declarator")
    while declarator is not None and declarator.type in (
        "pointer_declarator",
        "reference_declarator",
    ):
        declarator = declarator.child_by_field_name("declarator")
    if declarator is None or declarator.type != "function_declarator":
        return None
    function = text(declarator.child_by_field_name("declarator"))
    parameters = declarator.child_by_field_name("parameters")
    arguments = [text(p) for p in parameters.named_children] if parameters else []
    macro = function.isupper() and arguments and all(re.fullmatch(r"\w+", a) for a in arguments)
    if macro:
        return ".".join(arguments[-2:])  # TEST(name), TEST_F(Suite, Name) -> Suite.Name
    return function.rsplit("::", 1)[-1] or None


def _walk(node: Node, out: list[TestCase]) -> None:
    children = node.named_children
    for index, child in enumerate(children):
        if child.type == "function_definition":
            name = _function_name(child)
            if name:
                out.append(
                    TestCase(name, first_line(child), last_line(child), partial(_owns, name))
                )
        elif child.type in ("namespace_definition", "linkage_specification"):
            body = child.child_by_field_name("body")
            if body is not None:
                _walk(body, out)
        elif child.type == "expression_statement" and index + 1 < len(children):
            call = child.named_children[0] if child.named_children else None
            body = children[index + 1]
            if call is None or call.type != "call_expression" or body.type != "compound_statement":
                continue
            macro = text(call.child_by_field_name("function"))
            if macro in _CONTAINERS:
                _walk(body, out)
                continue
            arguments = call.child_by_field_name("arguments")
            literal = _string(arguments) if arguments is not None else None
            if macro.isupper() and literal is not None:
                name = _PREFIXES.get(macro, "") + literal
                out.append(TestCase(name, first_line(child), last_line(body), partial(_owns, name)))


def cpp_cases(path: str, source: str, read_file: ReadFile) -> list[TestCase]:
    cases: list[TestCase] = []
    _walk(parse("cpp", source), cases)
    return cases
