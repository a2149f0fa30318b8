"""Python tasks: `.py` sources, pytest ids, requirements a gold patch adds."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from functools import partial

import tree_sitter_python
from packaging.requirements import InvalidRequirement, Requirement
from tree_sitter import Node

from arena.languages.cases import ReadFile, TestCase
from arena.languages.profile import Language, PatchRules, TaskProfile
from arena.languages.syntax import first_line, last_line, parse, text


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


_FILE = re.compile(r"^diff --git a/\S+ b/(?P<path>\S+)$")
_SECTION = re.compile(r"^\s*\[(?P<name>[^\]]+)\]")
_QUOTED = re.compile(r""""([^"]+)"|'([^']+)'""")
_POETRY_ITEM = re.compile(r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*=")
_REQUIREMENT_FILE = re.compile(
    r"(?:^|/)(?:[^/]*(?:requirements|constraints)[^/]*|requirements/[^/]+)\.(?:txt|in)$"
)


def _requirement(text: str) -> str | None:
    text = text.strip().rstrip(",").strip()
    if not text or text.startswith(("-", "#", "[")) or "://" in text:
        return None
    try:
        parsed = Requirement(text)
    except InvalidRequirement:
        return None
    return str(parsed)


def _in_dependencies(path: str, section: str, line: str) -> bool:
    name = section.lower()
    if path.endswith("pyproject.toml"):
        return "dependencies" in name or name in ("project", "build-system")
    if path.endswith("setup.cfg"):
        return name in ("options", "options.extras_require")
    if path.endswith("tox.ini"):
        return name.startswith("testenv")
    return path.endswith("setup.py")


def _added(path: str, section: str, line: str) -> list[str]:
    if _REQUIREMENT_FILE.search(path):
        found = _requirement(line.split(" #", 1)[0])
        return [found] if found else []
    if not _in_dependencies(path, section, line):
        return []
    if path.endswith("pyproject.toml") and "poetry" in section.lower():
        item = _POETRY_ITEM.match(line)
        if item and item["name"].lower() != "python":
            return [item["name"]]
        return []
    if path.endswith(("pyproject.toml", "setup.py")):
        quoted = [a or b for a, b in _QUOTED.findall(line)]
        return [r for q in quoted if (r := _requirement(q))]
    if "=" in line and not _requirement(line):  # `key = value`: only the dependency keys
        key, _, line = line.partition("=")
        wanted = ("deps", "install_requires", "tests_require")
        if key.strip() not in wanted and section.lower() != "options.extras_require":
            return []
    found = _requirement(line)
    return [found] if found else []


def added_requirements(diff: str) -> tuple[str, ...]:
    """Requirements on the diff's added lines of dependency lists, in order, once each."""
    found: dict[str, None] = {}
    path, section = "", ""
    for line in diff.splitlines():
        if (header := _FILE.match(line)) is not None:
            path, section = header["path"], ""
            continue
        if line.startswith("@@"):
            context = line.split("@@", 2)[-1]
            if (named := _SECTION.match(context)) is not None:
                section = named["name"]
            continue
        if line.startswith(("+++", "---")) or not path:
            continue
        body = line[1:]
        if (named := _SECTION.match(body)) is not None and line[:1] in (" ", "+"):
            section = named["name"]
            continue
        if line.startswith("+"):
            for requirement in _added(path, section, body):
                found.setdefault(requirement)
    return tuple(found)


# names the test tools are imported or loaded by: a tree file of that name shadows the tool
_SHADOWING = frozenset(
    {"pytest", "_pytest", "pytest.py", "unittest", "unittest.py", "pluggy", "py.py",
     "sitecustomize", "sitecustomize.py", "usercustomize", "usercustomize.py", "nose", "nose2",
     "hypothesis", "doctest.py"}
)  # fmt: skip
# modules pytest itself imports: a package of that name where imports start (the checkout's
# root, or its src/ or lib/ folder) comes before the installed one
_PYTEST_IMPORTS = frozenset(
    {"iniconfig", "packaging", "attr", "attrs", "exceptiongroup", "tomli", "pygments",
     "colorama", "py"}
)  # fmt: skip
_IMPORT_ROOTS = frozenset({"src", "lib", "python"})
# sections of shared configuration files that only configure tests
_TEST_SECTION = re.compile(
    r"^\s*\[\s*(?:tool[.:](?:pytest|coverage|tox|nox|hatch\.envs)|pytest|coverage|tox|testenv)"
    r"\b[^\]]*\]"
)
_CONFIG_SECTION = re.compile(r"^\s*\[[^\]]+\]\s*$")
_SHARED_CONFIG = frozenset({"pyproject.toml", "setup.cfg"})


def shadows_test_tool(parts: Sequence[str]) -> bool:
    """A file at `parts` (its folders, then its name) that Python would load instead of a test
    tool, or of a module the tool imports, or a `.pth` file run at start-up."""
    name = parts[-1]
    top = parts[1:] if len(parts) > 2 and parts[0] in _IMPORT_ROOTS else parts
    return (
        name in _SHADOWING
        or any(part in _SHADOWING for part in parts[:-1])
        or name.endswith(".pth")
        or (len(top) > 1 and top[0] in _PYTEST_IMPORTS)
        or (len(top) == 1 and name.removesuffix(".py") in _PYTEST_IMPORTS and name.endswith(".py"))
    )


def config_test_spans(path: str, source: str) -> list[tuple[int, int]] | None:
    """The test-only sections of a pyproject.toml or setup.cfg (`[tool.pytest.ini_options]`,
    `[coverage:run]`, `[testenv]`)."""
    if posixpath.basename(path) not in _SHARED_CONFIG:
        return None
    spans: list[tuple[int, int]] = []
    lines = source.splitlines()
    start: int | None = None
    for number, line in enumerate(lines, 1):
        if _CONFIG_SECTION.match(line):
            if start is not None:
                spans.append((start, number - 1))
            start = number if _TEST_SECTION.match(line) else None
    if start is not None:
        spans.append((start, len(lines)))
    return spans


PATCH_RULES = PatchRules(
    shadows_tool=shadows_test_tool,
    test_config=frozenset({"conftest.py", "pytest.ini", "tox.ini", "noxfile.py", ".coveragerc"}),
    test_files=re.compile(r"(?:^test_[^/]*\.py|_test\.py|^tests?\.py)$"),
    test_spans=config_test_spans,
    comments={".py": "#", ".pyi": "#"},
)

PROFILE = TaskProfile(
    language=Language("python"),
    aliases=("py",),
    source_suffixes=(".py", ".pyi", ".pyx", ".pxd"),
    manifests=(),
    manifest_suffixes=(),
    grammar=tree_sitter_python.language,
    test_suffixes=(".py",),
    find_cases=python_cases,
    added_requirements=added_requirements,
    patch_rules=PATCH_RULES,
    definitions=(re.compile(r"\bdef\s+(\w+)"),),
)
