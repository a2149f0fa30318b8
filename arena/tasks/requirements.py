"""The Python requirements a gold patch adds, so its environment can hold them offline.

CI runs are offline: a fix that adds a test dependency (`time-machine` to the `tests` extra)
would fail on `base + gold` for want of a package, not of a fix. The environment build
fetches what the gold patch adds to the project's dependency lists into its wheelhouse
(third-party packages only: nothing of the patch's own code reaches the image).

Read from the diff's added lines, within the sections that hold dependencies: requirement
files, `pyproject.toml` dependency arrays and tables (PEP 621, Poetry), `setup.cfg`
`install_requires`/extras, `tox.ini` `deps`, and quoted items of `setup.py` lists.
"""

from __future__ import annotations

import re

from packaging.requirements import InvalidRequirement, Requirement

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
