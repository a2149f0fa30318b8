"""C++ tasks: C and C++ sources and headers, CMake's files, ctest and framework case ids."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial

import tree_sitter_cpp
from tree_sitter import Node

from arena.languages.cases import ReadFile, TestCase
from arena.languages.profile import Language, PatchRules, TaskProfile
from arena.languages.syntax import first_line, last_line, parse, text

_CONTAINERS = {"TEST_SUITE", "TEST_SUITE_BEGIN", "extern"}
_PREFIXES = {"SCENARIO": "Scenario: ", "SCENARIO_METHOD": "Scenario: "}


# before a case's name: a binary's ctest name and `::`, a TEST_PREFIX, gtest's `Instance/`
_PREFIX = r"(?:.*(?:::|\.|/))?"
# before a plain function's name: no `.`, so `check` owns no gtest `Parser.check`
_FUNCTION_PREFIX = r"(?:.*(?:::|/))?"
# after a template case's name: doctest's `name<int>`, Catch2's `name - int`
_TEMPLATE = r"(?:<.*>| - .+)?"
# C++ type keywords, which make tree-sitter fail on a template macro's argument list, and
# string literals, left alone
_TYPE_WORDS = re.compile(
    r'"(?:[^"\\\n]|\\.)*"|\b(?:(?:int|char|float|double|bool|long|short|unsigned|signed|void'
    r"|auto|wchar_t|char8_t|char16_t|char32_t|const|volatile|struct|class|typename)\b[ \t]*)+"
)
_TEMPLATE_MACRO = re.compile(r"\b[A-Z_]*TEMPLATE[A-Z_]*[ \t]*\(")
_PAREN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[()]')


def _owns(patterns: tuple[re.Pattern[str], ...], test_id: str) -> bool:
    forms = {test_id, test_id.replace("::", ".")}
    return any(p.fullmatch(form) for p in patterns for form in forms)


def _matcher(name: str, kind: str) -> Callable[[str], bool]:
    """Which ids are a case's: `kind` is "gtest" (`Suite.Name`), "case" (a string literal),
    "template" (a template case's literal) or "function" (a plain function or `TEST(name)`)."""
    if kind == "gtest":
        suite, _, test = name.partition(".")
        body = re.escape(suite) + r"(?:/[^.]+)?\." + re.escape(test) + r"(?:/.+)?"
        patterns = [_PREFIX + body]
    elif kind in ("case", "template"):
        tail = _TEMPLATE if kind == "template" else ""
        patterns = [_PREFIX + re.escape(name) + tail + r"(?:/.+)?"]
    else:
        patterns = [_FUNCTION_PREFIX + re.escape(name) + r"(?:/\d+)?"]
    return partial(_owns, tuple(re.compile(p, re.DOTALL) for p in patterns))


def _parseable(source: str) -> str:
    """The source with the type keywords in template macros' arguments (TEST_CASE_TEMPLATE,
    TEMPLATE_TEST_CASE) turned into identifiers of the same length, lines and columns kept."""
    out = list(source)
    for macro in _TEMPLATE_MACRO.finditer(source):
        depth, end = 0, len(source)
        for token in _PAREN.finditer(source, macro.end() - 1):
            depth += {"(": 1, ")": -1}.get(token.group(), 0)
            if depth == 0:
                end = token.start()
                break
        for word in _TYPE_WORDS.finditer(source, macro.end(), end):
            if not word.group().startswith('"'):
                out[word.start() : word.end()] = "x" * (word.end() - word.start())
    return "".join(out)


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


def _function_case(definition: Node) -> TestCase | None:
    name = _function_name(definition)
    if not name:
        return None
    kind = "gtest" if "." in name else "function"
    return TestCase(name, first_line(definition), last_line(definition), _matcher(name, kind))


def _walk(node: Node, out: list[TestCase]) -> None:
    children = node.named_children
    for index, child in enumerate(children):
        if child.type == "function_definition":
            if (case := _function_case(child)) is not None:
                out.append(case)
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
                kind = "template" if "TEMPLATE" in macro else "case"
                out.append(TestCase(name, first_line(child), last_line(body), _matcher(name, kind)))


def cpp_cases(path: str, source: str, read_file: ReadFile) -> list[TestCase]:
    cases: list[TestCase] = []
    _walk(parse("cpp", _parseable(source)), cases)
    return cases


SOURCE_SUFFIXES = (
    ".c", ".cc", ".cpp", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx", ".h++",
    ".ipp", ".inl", ".tpp", ".cu", ".cuh",
)  # fmt: skip

# CMake commands that register tests with CTest: what a CI run's test list is made of
_CMAKE_TEST_COMMAND = re.compile(
    r"^\s*(?:add_test|set_tests_properties|enable_testing|gtest_discover_tests|gtest_add_tests"
    r"|catch_discover_tests|doctest_discover_tests|include\s*\(\s*(?:CTest|GoogleTest|Catch)\b"
    r"|set_property\s*\(\s*TEST\b)",
    re.IGNORECASE,
)


def cmake_test_spans(path: str, source: str) -> list[tuple[int, int]] | None:
    """The commands that register tests in a CMake file."""
    name = path.rsplit("/", 1)[-1]
    if name != "CMakeLists.txt" and not name.endswith(".cmake"):
        return None
    spans: list[tuple[int, int]] = []
    lines = source.splitlines()
    number = 0
    while number < len(lines):
        if not _CMAKE_TEST_COMMAND.match(lines[number]):
            number += 1
            continue
        start, depth = number, 0
        while number < len(lines):
            depth += lines[number].count("(") - lines[number].count(")")
            number += 1
            if depth <= 0:
                break
        spans.append((start + 1, number))
    return spans


_COMMENTED = (".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx", ".ipp", ".inl")
PATCH_RULES = PatchRules(
    test_config=frozenset(
        {"CTestTestfile.cmake", "CTestConfig.cmake", "CTestCustom.cmake", "CTestCustom.cmake.in"}
    ),
    # the test frameworks' own headers, vendored or not
    harness=re.compile(
        r"(?:^|/)(?:doctest\.h|catch\.hpp|catch_amalgamated\.[ch]pp|gtest\.h|gmock\.h|utest\.h"
        r"|acutest\.h|unity\.h|minunit\.h)$"
        r"|(?:^|/)(?:gtest|gmock|googletest|googlemock|catch2|doctest)/"
    ),
    test_files=re.compile(
        r"(?:^test_[^/]*\.(?:c|cc|cpp|cxx)|_(?:unit)?tests?\.(?:c|cc|cpp|cxx|h|hpp))$"
    ),
    test_spans=cmake_test_spans,
    comments={**dict.fromkeys(_COMMENTED, "//"), ".cmake": "#"},
    comments_by_name={"CMakeLists.txt": "#"},
)

PROFILE = TaskProfile(
    language=Language("cpp"),
    aliases=("c++", "cxx"),
    source_suffixes=SOURCE_SUFFIXES,
    manifests=("CMakeLists.txt",),
    manifest_suffixes=(".cmake",),
    grammar=tree_sitter_cpp.language,
    test_suffixes=(".cpp", ".cc", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h"),
    find_cases=cpp_cases,
    patch_rules=PATCH_RULES,
    definitions=(
        re.compile(r"\b(?:void|int|bool|auto)\s+(\w+)\s*\("),  # returning a plain type
        re.compile(r"\b(?:TEST|TEST_F|TEST_P|TYPED_TEST)\s*\(\s*\w+\s*,\s*(\w+)"),  # GoogleTest
        re.compile(r"\b(?:TEST_CASE|SCENARIO)\s*\(\s*\"([^\"]+)\""),  # Catch2, doctest
    ),
)
