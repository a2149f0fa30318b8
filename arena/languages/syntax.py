"""Tree-sitter parsers for the languages whose tests can be mapped (each its profile's grammar)."""

from __future__ import annotations

from functools import cache

from tree_sitter import Language, Node, Parser

from arena.languages import task_profile


@cache
def _language(name: str) -> Language:
    return Language(task_profile(name).grammar())


def parse(language: str, source: str) -> Node:
    """The syntax tree's root; a fresh Parser each time, since parsers are not thread-safe."""
    return Parser(_language(language)).parse(source.encode("utf-8")).root_node


def text(node: Node | None) -> str:
    return "" if node is None or node.text is None else node.text.decode("utf-8", "replace")


def first_line(node: Node) -> int:
    return node.start_point.row + 1


def last_line(node: Node) -> int:
    """1-based last line; a node ending with its newline (a Rust `///` comment) ends before."""
    end = node.end_point
    return end.row + 1 if end.column > 0 or end.row == node.start_point.row else end.row
