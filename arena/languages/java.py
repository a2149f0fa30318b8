"""Java tasks: `.java` sources, Maven's and Gradle's build files, Surefire's case ids.

Surefire names a test case `classname::name`: the class's binary name (`demo.CalcTest`,
`demo.CalcTest$Nested` for a nested class) and the method, with a parameterised or repeated
case's arguments and index after it (`adds(int, int)[2]`, `repeated()[1]`, JUnit 4's
`adds[0]`). A test method is one annotated as JUnit 4's or 5's annotations make tests.
"""

from __future__ import annotations

import re
from functools import partial

import tree_sitter_java
from tree_sitter import Node

from arena.languages.cases import ReadFile, TestCase
from arena.languages.profile import Language, PatchRules, TaskProfile
from arena.languages.syntax import first_line, last_line, parse, text

# what makes a method a test (JUnit 5's, and JUnit 4's @Test and @Theory), by its last name
TEST_ANNOTATIONS = frozenset(
    {"Test", "ParameterizedTest", "RepeatedTest", "TestFactory", "TestTemplate", "Theory"}
)
_TYPES = ("class_declaration", "interface_declaration", "enum_declaration", "record_declaration")
_CASE_TAIL = re.compile(r"(?:\(.*\))?(?:\[.*\])?$")


def surefire_method(name: str) -> str:
    """The method of a Surefire case name: `adds(int, int)[2]` -> `adds`."""
    return _CASE_TAIL.sub("", name, count=1)


def _owns(classname: str, method: str, test_id: str) -> bool:
    owner, sep, name = test_id.partition("::")
    return bool(sep) and owner == classname and surefire_method(name) == method


def _annotations(declaration: Node) -> list[str]:
    names = []
    for child in declaration.children:
        if child.type == "modifiers":
            names += [
                text(m.child_by_field_name("name")).rsplit(".", 1)[-1]
                for m in child.children
                if m.type in ("marker_annotation", "annotation")
            ]
    return names


def _walk(body: Node | None, classname: str, out: list[TestCase]) -> None:
    if body is None:
        return
    for member in body.children:
        if member.type in _TYPES:
            name = text(member.child_by_field_name("name"))
            _walk(member.child_by_field_name("body"), f"{classname}${name}", out)
        elif member.type == "method_declaration" and TEST_ANNOTATIONS & set(_annotations(member)):
            method = text(member.child_by_field_name("name"))
            out.append(
                TestCase(
                    label=f"{classname}::{method}",
                    start=first_line(member),
                    end=last_line(member),
                    owns=partial(_owns, classname, method),
                )
            )
        elif member.type == "enum_body_declarations":  # an enum's members after its constants
            _walk(member, classname, out)


def java_cases(path: str, source: str, read_file: ReadFile) -> list[TestCase]:
    """The test methods of a Java file, by the class binary names Surefire reports."""
    root = parse("java", source)
    package = next(
        (
            text(part)
            for child in root.children
            if child.type == "package_declaration"
            for part in child.children
            if part.type in ("scoped_identifier", "identifier")
        ),
        "",
    )
    cases: list[TestCase] = []
    for top in root.children:
        if top.type in _TYPES:
            name = text(top.child_by_field_name("name"))
            _walk(top.child_by_field_name("body"), f"{package}.{name}" if package else name, cases)
    return cases


PATCH_RULES = PatchRules(
    # Surefire's and Failsafe's default test class names
    test_files=re.compile(r"(?:^Test[^/]*|Tests?|TestCase|IT)\.java$"),
    comments={".java": "//", ".gradle": "//", ".kts": "//"},
)

PROFILE = TaskProfile(
    language=Language("java"),
    aliases=("jdk",),
    source_suffixes=(".java",),
    manifests=("pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle"),
    manifest_suffixes=(),
    grammar=tree_sitter_java.language,
    test_suffixes=(".java",),
    find_cases=java_cases,
    patch_rules=PATCH_RULES,
    definitions=(re.compile(r"\bvoid\s+(\w+)\s*\("),),
)
