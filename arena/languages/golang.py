"""Go tasks: `.go` sources and the module files, `go test -json` ids."""

from __future__ import annotations

import posixpath
import re
from functools import partial

import tree_sitter_go
from tree_sitter import Node

from arena.languages.cases import ReadFile, TestCase, is_path_suffix
from arena.languages.profile import Language, PatchRules, TaskProfile
from arena.languages.syntax import first_line, last_line, parse, text

_MODULE = re.compile(r"^\s*module\s+\"?([^\s\"]+)\"?", re.MULTILINE)


def go_package(path: str, read_file: ReadFile) -> str | None:
    """The import path of the package holding `path`, from the nearest go.mod; None: none."""
    directory = posixpath.dirname(path)
    probe = directory
    while True:
        go_mod = read_file(posixpath.join(probe, "go.mod") if probe else "go.mod")
        if go_mod is not None and (module := _MODULE.search(go_mod)):
            below = posixpath.relpath(directory or ".", probe or ".")
            return module[1] if below == "." else f"{module[1]}/{below}"
        if not probe:
            return None
        probe = posixpath.dirname(probe)


def subtest_name(literal: str) -> str:
    """What `testing` makes of a t.Run name: spaces become underscores."""
    return re.sub(r"\s", "_", literal)


def _package_matches(package: str, expected: str | None, directory: str) -> bool:
    if expected is not None:
        return package == expected
    return not directory or is_path_suffix(directory, package)


def _owns(expected: str | None, directory: str, pattern: re.Pattern[str], test_id: str) -> bool:
    package, sep, name = test_id.partition("::")  # import paths hold no "::", names may
    if not sep:
        package, name = "", test_id
    elif not _package_matches(package, expected, directory):
        return False
    return pattern.fullmatch(name) is not None


def _literal(node: Node) -> str | None:
    if node.type == "interpreted_string_literal":
        return text(node)[1:-1]
    if node.type == "raw_string_literal":
        return text(node)[1:-1]
    return None


def _subtests(node: Node, parent: str, make: partial[TestCase], out: list[TestCase]) -> None:
    for child in node.named_children:
        name = parent
        if child.type == "call_expression":
            function = child.child_by_field_name("function")
            arguments = child.child_by_field_name("arguments")
            first = arguments.named_children[0] if arguments and arguments.named_children else None
            field_node = function.child_by_field_name("field") if function else None
            literal = _literal(first) if first is not None else None
            if text(field_node) == "Run" and literal is not None:
                name = f"{parent}/{subtest_name(literal)}"
                pattern = re.compile(re.escape(name) + r"(#\d+)?(/.*)?")
                out.append(make(name, first_line(child), last_line(child), pattern))
        _subtests(child, name, make, out)


def go_cases(path: str, source: str, read_file: ReadFile) -> list[TestCase]:
    expected = go_package(path, read_file)
    directory = posixpath.dirname(path)

    def make(label: str, start: int, end: int, pattern: re.Pattern[str]) -> TestCase:
        return TestCase(label, start, end, partial(_owns, expected, directory, pattern))

    cases: list[TestCase] = []
    for decl in parse("go", source).named_children:
        name = text(decl.child_by_field_name("name"))
        if decl.type == "function_declaration":
            pattern = re.compile(re.escape(name) + r"(/.*)?")
            cases.append(make(name, first_line(decl), last_line(decl), pattern))
            body = decl.child_by_field_name("body")
            if body is not None:
                _subtests(body, name, partial(make), cases)
        elif decl.type == "method_declaration":  # a suite method, run as TestSuite/TestM
            pattern = re.compile(r"[^/]+/" + re.escape(name) + r"(/.*)?")
            cases.append(make(name, first_line(decl), last_line(decl), pattern))
    return cases


PATCH_RULES = PatchRules(test_files=re.compile(r"_test\.go$"), comments={".go": "//"})

PROFILE = TaskProfile(
    language=Language("go"),
    aliases=("golang",),
    source_suffixes=(".go",),
    manifests=("go.mod", "go.sum"),
    manifest_suffixes=(),
    grammar=tree_sitter_go.language,
    test_suffixes=(".go",),
    find_cases=go_cases,
    patch_rules=PATCH_RULES,
    definitions=(re.compile(r"\bfunc\s+(?:\([^)]*\)\s*)?(\w+)"),),
)
