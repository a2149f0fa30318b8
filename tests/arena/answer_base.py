"""The base tree the answer fixtures in `answers/` are written against."""

from __future__ import annotations

from pathlib import Path

import pygit2

FILES: dict[str, str] = {
    "pkg/calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
    "pkg/dup.py": "def f():\n    return 0\n\n\ndef g():\n    return 0\n",
    "README.md": "calc\n",
    "tests/test_calc.py": "from pkg.calc import add\n\n\ndef test_add():\n    assert add(1, 1) == 2\n",
    "old.txt": "obsolete\n",
    "long.py": "".join(f"x{i} = {i}\n" for i in range(1, 21)),
    "go/calc.go": "package calc\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n",
    "win/legacy.py": "def old():\r\n    return 1\r\n",
    "a/b.txt": "inside a\n",
    "nonl.txt": "first\nlast",
    "docs/usage.md": "# Usage\n\n```python\nfrom pkg.calc import add\nadd(1, 2)\n```\n\nReturns -1.\n",
    "docs/ops.md": "Unary operators:\n-- increments a number\n-- decrements a number\n",
}


def read_base(path: str) -> str | None:
    return FILES.get(path)


def checkout(root: Path) -> pygit2.Repository:
    """A committed git repo of FILES at `root`, its index matching the tree, as a run's is."""
    repo = pygit2.init_repository(str(root))
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(text.encode())
    repo.index.add_all()
    repo.index.write()
    who = pygit2.Signature("arena", "arena@example.invalid")
    repo.create_commit("HEAD", who, who, "base", repo.index.write_tree(), [])
    return repo
