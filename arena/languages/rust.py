"""Rust tasks: `.rs` sources and Cargo's files, libtest ids."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from functools import partial

import tree_sitter_rust
from tree_sitter import Node

from arena.languages.cases import ReadFile, TestCase, is_path_suffix
from arena.languages.profile import Language, PatchRules, TaskProfile
from arena.languages.syntax import first_line, last_line, parse, text

_GENERICS = re.compile(r"<.*>", re.DOTALL)


@dataclass(frozen=True)
class _Place:
    """Where a file sits in its package: which binaries run its tests, and its module path."""

    path: str
    binaries: tuple[str, ...]  # test binary sources as the package sees them, e.g. src/lib.rs
    anywhere_below: str | None  # any src/lib.rs, src/main.rs, src/bin/* whose src dir ends here
    module: tuple[str, ...]


def _module_of(parts: list[str]) -> tuple[str, ...]:
    names = [posixpath.splitext(part)[0] for part in parts]
    if names and names[-1] == "mod":
        names.pop()
    return tuple(names)


def _place(path: str) -> _Place:
    parts = path.split("/")
    if "src" in parts:
        at = len(parts) - 1 - parts[::-1].index("src")
        below = parts[at + 1 :]
        src_dir = "/".join(parts[: at + 1])
        if below and below[0] == "bin":
            return _Place(path, (path,), None, ())
        module = () if below in (["lib.rs"], ["main.rs"]) else _module_of(below)
        return _Place(path, (), src_dir, module)
    if "tests" in parts:
        at = len(parts) - 1 - parts[::-1].index("tests")
        below = parts[at + 1 :]
        if len(below) <= 1:
            return _Place(path, (path,), None, ())
        main = "/".join([*parts[: at + 2], "main.rs"])
        return _Place(
            path, (main,), None, () if below[1:] == ["main.rs"] else _module_of(below[1:])
        )
    return _Place(path, (path,), None, ())


def _binary_matches(place: _Place, binary: str) -> bool:
    if any(is_path_suffix(binary, own) for own in place.binaries):
        return True
    if place.anywhere_below is None:
        return False
    directory, name = posixpath.split(binary)
    runs_here = name in ("lib.rs", "main.rs") or posixpath.basename(directory) == "bin"
    src_dir = directory if name in ("lib.rs", "main.rs") else posixpath.dirname(directory)
    return runs_here and is_path_suffix(src_dir, place.anywhere_below)


def _owns_test(place: _Place, name: str, test_id: str) -> bool:
    if test_id == name:
        return True
    binary, sep, rest = test_id.partition("::")
    return bool(sep) and rest == name and _binary_matches(place, binary)


def _owns_doctest(place: _Place, item: str, test_id: str) -> bool:
    """`doc:crate::src/lib.rs - Type::method`; an item path written otherwise falls back to
    its last segment (`units::crate::Duration::name` for a trait impl)."""
    if not test_id.startswith("doc:"):
        return False
    name = test_id.partition("::")[2]
    file, sep, found = name.partition(" -")
    if not sep or not is_path_suffix(file, place.path):
        return False
    found = found.strip()
    last = item.rsplit("::", 1)[-1]
    return found == item or (bool(last) and found.rsplit("::", 1)[-1] == last and bool(item))


def _is_doc(node: Node, marker: str) -> bool:
    body = text(node)
    if node.type == "line_comment":
        return body.startswith(marker) and not body.startswith("////")
    return node.type == "block_comment" and body.startswith("/**" if marker == "///" else "/*!")


class _Walker:
    def __init__(self, place: _Place) -> None:
        self.place = place
        self.cases: list[TestCase] = []

    def _doc_case(self, item: str, start: int, end: int) -> None:
        label = f"{self.place.path} - {item}"
        self.cases.append(TestCase(label, start, end, partial(_owns_doctest, self.place, item)))

    def walk(self, items: Node, mods: tuple[str, ...], owner: str | None) -> None:
        """`items` is a source_file or declaration_list; `owner` the type of an impl block."""
        path = (*self.place.module, *mods)
        children = items.named_children
        inner = [c for c in children if _is_doc(c, "//!")]
        if inner and owner is None:
            self._doc_case("::".join(path), first_line(inner[0]), last_line(inner[-1]))
        pending: list[Node] = []  # doc comments and attributes right before an item
        for child in children:
            if child.type in ("line_comment", "block_comment", "attribute_item"):
                if _is_doc(child, "//!"):
                    continue
                pending.append(child)
                continue
            docs = [c for c in pending if _is_doc(c, "///")]
            attributes = [c for c in pending if c.type == "attribute_item"]
            pending = []
            name = text(child.child_by_field_name("name"))
            if child.type == "impl_item":
                body = child.child_by_field_name("body")
                written = _GENERICS.sub("", text(child.child_by_field_name("type")))
                if body is not None:
                    self.walk(body, mods, "".join(written.split()))
                continue
            item = "::".join((*path, *((owner,) if owner else ()), name))
            if docs and name:
                self._doc_case(item, first_line(docs[0]), last_line(docs[-1]))
            if child.type == "mod_item":
                body = child.child_by_field_name("body")
                if body is not None:
                    self.walk(body, (*mods, name), None)
            elif child.type == "function_item" and owner is None:
                start = first_line(attributes[0]) if attributes else first_line(child)
                self.cases.append(
                    TestCase(item, start, last_line(child), partial(_owns_test, self.place, item))
                )


def rust_cases(path: str, source: str, read_file: ReadFile) -> list[TestCase]:
    walker = _Walker(_place(path))
    walker.walk(parse("rust", source), (), None)
    return walker.cases


def cfg_test_spans(path: str, source: str) -> list[tuple[int, int]] | None:
    """The `#[cfg(test)]` items (test modules) of a Rust file."""
    if not path.endswith(".rs"):
        return None
    spans: list[tuple[int, int]] = []
    children = list(parse("rust", source).children)
    for i, node in enumerate(children):
        if node.type != "attribute_item" or "cfg(test)" not in text(node).replace(" ", ""):
            continue
        following = next((n for n in children[i + 1 :] if n.type != "attribute_item"), None)
        if following is not None:
            spans.append((first_line(node), last_line(following)))
    return spans


PATCH_RULES = PatchRules(test_spans=cfg_test_spans, comments={".rs": "//"})

PROFILE = TaskProfile(
    language=Language("rust"),
    aliases=("rs",),
    source_suffixes=(".rs",),
    manifests=("Cargo.toml", "Cargo.lock"),
    manifest_suffixes=(),
    grammar=tree_sitter_rust.language,
    test_suffixes=(".rs",),
    find_cases=rust_cases,
    patch_rules=PATCH_RULES,
    definitions=(re.compile(r"\bfn\s+(\w+)"),),
)
