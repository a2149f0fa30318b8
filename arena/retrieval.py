"""Retrieval-augmented context: BM25 over a repo's source chunks, packed into a token budget.

Chunks are functions and classes where a parser is at hand (Python's `ast`), fixed line
windows elsewhere. The chunking and the index are cached per repo and commit.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import bm25s
import numpy as np

from arena.vocabulary import Role

SOURCE_SUFFIXES = (
    ".py",
    ".go",
    ".rs",
    ".c",
    ".cc",
    ".cpp",
    ".cxx",
    ".h",
    ".hh",
    ".hpp",
    ".hxx",
    ".toml",
    ".cfg",
    ".txt",
    ".md",
    ".mod",
    ".yml",
    ".yaml",
)
WINDOW_LINES = 40
WINDOW_STEP = 30
MAX_FILE_BYTES = 512 * 1024
TEST_BOOST = 1.5
# a path that says it holds tests: a tests folder, or a file named test_x, x_test(s), tests
_TEST_PATH = re.compile(
    r"(^|/)(tests?|testing)(/|$)|(^|/)test_[^/]*$|_tests?\.[a-z]+$|(^|/)tests?\.[a-z]+$"
)
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")


def is_test_path(path: str) -> bool:
    return bool(_TEST_PATH.search(path))


@dataclass(frozen=True)
class Chunk:
    path: str
    start: int  # 1-based, inclusive
    end: int
    text: str

    @property
    def is_test(self) -> bool:
        return is_test_path(self.path)

    def render(self) -> str:
        return f"### {self.path} (lines {self.start}-{self.end})\n```\n{self.text.rstrip()}\n```\n"


def estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _windows(path: str, lines: list[str]) -> list[Chunk]:
    chunks = []
    for start in range(0, max(len(lines), 1), WINDOW_STEP):
        piece = lines[start : start + WINDOW_LINES]
        if piece:
            chunks.append(Chunk(path, start + 1, start + len(piece), "".join(piece)))
        if start + WINDOW_LINES >= len(lines):
            break
    return chunks


def _python_chunks(path: str, text: str) -> list[Chunk]:
    lines = text.splitlines(keepends=True)
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return _windows(path, lines)
    chunks: list[Chunk] = []
    covered: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            end = node.end_lineno or node.lineno
            if isinstance(node, ast.ClassDef) and end - start > WINDOW_LINES * 2:
                end = start + WINDOW_LINES  # big classes: their header; methods come on their own
            chunks.append(Chunk(path, start, end, "".join(lines[start - 1 : end])))
            covered.update(range(start, end + 1))
    rest = [i for i in range(1, len(lines) + 1) if i not in covered and lines[i - 1].strip()]
    if rest:  # module-level code: imports, constants
        first, last = rest[0], rest[-1]
        body = "".join(lines[i - 1] for i in rest[: WINDOW_LINES * 2])
        chunks.append(Chunk(path, first, last, body))
    return chunks


def chunk_file(path: str, text: str) -> list[Chunk]:
    if path.endswith(".py"):
        return _python_chunks(path, text)
    return _windows(path, text.splitlines(keepends=True))


def _tokens(text: str) -> list[str]:
    """Identifiers split on snake_case and camelCase as well as kept whole."""
    out: list[str] = []
    for word in _TOKEN.findall(text):
        lowered = word.lower()
        out.append(lowered)
        parts = [p.lower() for p in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", word) if p]
        if len(parts) > 1:
            out.extend(parts)
    return out or ["_"]


class RepoIndex:
    """A BM25 index over one repo at one commit."""

    def __init__(self, chunks: list[Chunk]) -> None:
        self.chunks = chunks
        self._bm25 = bm25s.BM25()
        if chunks:  # bm25s cannot index an empty corpus
            self._bm25.index([_tokens(c.path + "\n" + c.text) for c in chunks], show_progress=False)

    @classmethod
    def build(
        cls,
        paths: list[str],
        read_file: Callable[[str], str | None],
        cache_dir: Path | None,
        cache_key: str,
    ) -> RepoIndex:
        cached = (
            cache_dir / f"{hashlib.sha256(cache_key.encode()).hexdigest()[:24]}.json"
            if cache_dir
            else None
        )
        if cached is not None and cached.is_file():
            return cls([Chunk(**c) for c in json.loads(cached.read_text())])
        chunks: list[Chunk] = []
        for path in sorted(paths):
            if not path.endswith(SOURCE_SUFFIXES) or path.startswith(".git/"):
                continue
            text = read_file(path)
            if text is None or len(text) > MAX_FILE_BYTES:
                continue
            chunks.extend(chunk_file(path, text))
        if cached is not None:  # whole or not at all: workers build the same index at once
            cached.parent.mkdir(parents=True, exist_ok=True)
            partial = cached.with_name(f"{cached.name}.{os.getpid()}.{threading.get_ident()}")
            partial.write_text(json.dumps([asdict(c) for c in chunks]))
            partial.replace(cached)
        return cls(chunks)

    def search(self, query: str, role: Role) -> list[tuple[Chunk, float]]:
        if not self.chunks:
            return []
        terms = _tokens(query + (" test tests assert" if role is Role.REVIEWER else ""))
        scores = np.asarray(self._bm25.get_scores(terms), dtype=float)
        if role is Role.REVIEWER:
            scores = scores * np.array([TEST_BOOST if c.is_test else 1.0 for c in self.chunks])
        order = np.argsort(-scores, kind="stable")
        return [(self.chunks[i], float(scores[i])) for i in order if scores[i] > 0]


def pack_context(ranked: list[tuple[Chunk, float]], budget_tokens: int) -> str:
    """The best chunks that fit the budget, grouped back in file order for reading."""
    chosen: list[Chunk] = []
    used = 0
    for chunk, _ in ranked:
        cost = estimate_tokens(chunk.render())
        if used + cost > budget_tokens:
            continue
        if any(
            c.path == chunk.path and c.start <= chunk.start and chunk.end <= c.end for c in chosen
        ):
            continue
        chosen.append(chunk)
        used += cost
    chosen.sort(key=lambda c: (c.path, c.start))
    return "\n".join(c.render() for c in chosen)
