"""The dependency direction of the architecture map: drivers import the engine, never each other.

`api` and `workers` meet only in `arena.vocabulary` and `arena.queues` (and the store); the
engine (`arena`) imports no driver: not `api`, not `workers`, not `cli`, the command line,
a driver like them beside them (it starts workers and the API). SQL is executed only in
`arena/store`. The map is docs/architecture.md.
"""

from __future__ import annotations

import ast
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _imports(package: str, skip: tuple[str, ...] = ()) -> dict[str, set[str]]:
    """Every module each file of `package` imports (top level or inside a function)."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(skip):
            continue
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), relative)):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module)  # and `from cli import play` as `cli.play`:
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
        found[relative] = names
    return found


def _is_in(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(f"{p}.") for p in packages)


def _offenders(found: dict[str, set[str]], banned: tuple[str, ...]) -> dict[str, list[str]]:
    """Each file's imports of a banned package or module (`cli` bans it and its
    sub-modules, not `clinic`)."""
    return {
        path: sorted(n for n in names if _is_in(n, banned))
        for path, names in found.items()
        if any(_is_in(n, banned) for n in names)
    }


def test_the_api_imports_no_other_driver() -> None:
    assert _offenders(_imports("api"), ("workers", "cli")) == {}


def test_the_workers_import_no_other_driver() -> None:
    assert _offenders(_imports("workers"), ("api", "cli")) == {}


def test_the_engine_imports_no_driver() -> None:
    assert _offenders(_imports("arena"), ("api", "workers", "cli")) == {}


def test_a_banned_module_is_found_by_its_dotted_name() -> None:
    """The checks above would pass vacuously if `cli` matched `clinic` (a prefix)."""
    found = {"x.py": {"cli.play", "clinic", "arena", "workers"}}
    assert _offenders(found, ("cli", "workers")) == {"x.py": ["cli.play", "workers"]}


def test_the_runner_imports_nothing_of_ours() -> None:
    assert _offenders(_imports("ci_runner"), ("arena", "api", "workers", "cli")) == {}


def test_the_engine_uses_only_the_runners_public_names() -> None:
    """`arena` imports `ci_runner` itself, the names its `__init__` lists, never one of its
    modules: what the engine relies on is that one list, and the rest may move."""
    import ci_runner

    public = set(ci_runner.__all__)
    reaching = {
        path: sorted(n for n in names if _is_in(n, ("ci_runner",)) and n != "ci_runner")
        for path, names in _imports("arena").items()
    }
    assert {
        path: [n for n in names if n.removeprefix("ci_runner.") not in public]
        for path, names in reaching.items()
        if any(n.removeprefix("ci_runner.") not in public for n in names)
    } == {}


def test_sql_is_executed_only_in_the_store() -> None:
    outside = []
    for package in ("api", "workers", "arena"):
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative.startswith("arena/store/"):
                continue
            for node in ast.walk(ast.parse(path.read_text(), relative)):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                    continue
                first = node.args[0] if node.args else None
                literal = isinstance(first, ast.Constant) and isinstance(first.value, str)
                if node.func.attr == "execute" and literal:
                    outside.append(f"{relative}:{node.lineno}")
    assert outside == []


def test_the_vocabulary_imports_nothing_but_enum() -> None:
    """Every side imports it, the command line at start-up: it must cost nothing."""
    found = _imports("arena")["arena/vocabulary.py"]
    assert {name.split(".")[0] for name in found} == {"__future__", "enum"}


DOCKER = (
    "docker",
    "ci_runner.providers.docker.engine",
    "ci_runner.providers.docker.sandbox",
    "ci_runner.providers.docker.images",
    "ci_runner.providers.docker.provider",
    "ci_runner.providers.docker.services",
    "ci_runner.sandbox.DockerSandbox",
    "ci_runner.sandbox.sweep_orphans",
)


def test_only_the_docker_provider_names_docker() -> None:
    """The runner, image and environment builds and services reach sandboxes and images
    through the provider's interfaces (ci_runner.sandbox.provider, .image_store); only the
    Docker provider's own modules and the engine connection import the Docker SDK (the
    registry names providers by where they live), so a second provider touches none of them."""
    above = _imports("ci_runner", skip=("ci_runner/providers/docker/",))
    assert _offenders(above, DOCKER) == {}


def test_the_engine_and_its_drivers_reach_docker_only_through_a_provider() -> None:
    """Health checks and commands included: they ask `ci_runner.providers` for one."""
    for package in ("arena", "api", "workers"):
        assert _offenders(_imports(package), DOCKER) == {}, package


def test_the_arena_is_built_in_one_place() -> None:
    """Both drivers take their `Arena` from `arena.runtime.make_arena`, which passes every
    setting: an arena built elsewhere would miss the next one added."""
    builders = []
    for package in ("arena", "api", "workers"):
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            for node in ast.walk(ast.parse(path.read_text(), relative)):
                if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Arena":
                    builders.append(relative)
    assert builders == ["arena/runtime.py"]


PACKAGES = ("arena", "ci_runner", "cli", "workers", "api")


def _module_graph() -> dict[str, set[str]]:
    """Each of our modules (a package by its `__init__`'s name) -> the modules of ours it
    imports; `from m import name` counts as importing m.name where that is a module."""
    files = {
        relative: names for package in PACKAGES for relative, names in _imports(package).items()
    }

    def name_of(relative: str) -> str:
        return relative.removesuffix(".py").removesuffix("/__init__").replace("/", ".")

    modules = {name_of(relative) for relative in files}
    graph: dict[str, set[str]] = {}
    for relative, names in files.items():
        ours = {n for n in names if _is_in(n, PACKAGES)}
        graph[name_of(relative)] = {
            n if n in modules else n.rpartition(".")[0] for n in ours
        } & modules
    return graph


def _reaches(graph: dict[str, set[str]], start: str, target: str) -> bool:
    """Whether a chain of imports leads from a module in `start` to one in `target` (each a
    package with everything in it, or a module)."""
    queue = [m for m in graph if _is_in(m, (start,))]
    seen = set(queue)
    while queue:
        for imported in graph[queue.pop()]:
            if _is_in(imported, (target,)):
                return True
            if imported not in seen:
                seen.add(imported)
                queue.append(imported)
    return False


def test_no_two_packages_or_modules_beside_each_other_import_each_other() -> None:
    """A circle makes import order matter and the two one unit: `arena.ci` and
    `arena.tasks`, `ci_runner.languages` and `ci_runner.workflows` were one once. Siblings
    are compared with everything they hold, through any chain of imports."""
    graph = _module_graph()
    siblings: dict[str, set[str]] = {}
    for module in graph:
        parts = module.split(".")
        for depth in range(2, len(parts) + 1):
            siblings.setdefault(".".join(parts[: depth - 1]), set()).add(".".join(parts[:depth]))
    circles = [
        (a, b)
        for members in siblings.values()
        for a in sorted(members)
        for b in sorted(members)
        if a < b and _reaches(graph, a, b) and _reaches(graph, b, a)
    ]
    assert circles == []


def test_a_circle_is_found() -> None:
    """The check above would pass vacuously if chains were not followed."""
    graph = {"p.a": {"p.c"}, "p.c": {"p.b.x"}, "p.b.x": {"p.a"}, "p.b": set()}
    assert _reaches(graph, "p.a", "p.b") and _reaches(graph, "p.b", "p.a")
    assert not _reaches({"p.a": {"p.b"}, "p.b": set()}, "p.b", "p.a")


# what a language's folder (ci_runner) or module (arena) may not import: the layers that
# apply the languages' profiles, which import the registry; other languages are checked too
_APPLYING = {
    "ci_runner": (
        "ci_runner.workflows", "ci_runner.tripwires", "ci_runner.reports", "ci_runner.runner",
        "ci_runner.environments", "ci_runner.images", "ci_runner.toolchains",
        "ci_runner.providers", "ci_runner.sandbox", "ci_runner.warmup",
    ),
    "arena": ("arena.ownership", "arena.patch_scope", "arena.tasks", "arena.ci", "arena.match"),
}  # fmt: skip


def test_a_language_builds_only_on_the_registry_kit_and_never_on_another_language() -> None:
    """A language is its folder in `ci_runner.languages` and its module in `arena.languages`:
    they may use the modules beside the registries (the kit) and lower layers, never the
    layers that apply profiles, nor another language's files."""
    from ci_runner.languages import LANGUAGE_FOLDERS

    folders = set(LANGUAGE_FOLDERS.values())
    for folder in folders:
        others = tuple(f"ci_runner.languages.{f}" for f in folders - {folder})
        found = _imports("ci_runner", skip=())
        mine = {p: n for p, n in found.items() if p.startswith(f"ci_runner/languages/{folder}/")}
        assert mine, folder
        assert _offenders(mine, _APPLYING["ci_runner"] + others) == {}, folder
        others = tuple(f"arena.languages.{f}" for f in folders - {folder})
        module = {p: n for p, n in _imports("arena").items() if p == f"arena/languages/{folder}.py"}
        assert module, folder
        assert _offenders(module, _APPLYING["arena"] + others) == {}, folder


# a test tool's name in code (not in a docstring or a comment): `unittest` is also a make
# target's and a folder's name, so it is not one of them
_TOOL_NAMES = re.compile(
    r"\b(?:pytest|py\.test|cargo|ctest|go\s+test|gotestsum|nextest|tox|nox|rustup|cmake"
    r"|catch2|gtest|doctest|mvn|maven|gradle|surefire)\b",
    re.IGNORECASE,
)
# shared modules that still hold a language's tools, each to move into its language's files
_STILL_NAMING_TOOLS = {
    "ci_runner/workflows/actions.py": "Rust's GitHub actions (actions-rs/cargo, install-action)",
    "ci_runner/workflows/brew.py": "Homebrew's C++ test frameworks as Debian packages",
    "ci_runner/workflows/ranking.py": "legs named after pytest, tox and nox environments",
    "ci_runner/runner_setup.py": "cmake's and ninja's Debian packages, among every command's",
    "ci_runner/runner.py": "ctest's binaries split into their cases",
    "ci_runner/reports/binaries.py": "doctest, Catch2 and GoogleTest binaries' cases",
    "ci_runner/reports/cases.py": "doctest's case lists",
    "ci_runner/pipeline.py": "the ctest report format",
}


def _code_words(path: Path) -> list[str]:
    """The names and string literals of a module's code, its docstrings left out."""
    words: list[str] = []
    previous: tokenize.TokenInfo | None = None
    with path.open() as source:
        for token in tokenize.generate_tokens(source.readline):
            docstring = token.type == tokenize.STRING and (
                previous is None
                or previous.type in (tokenize.INDENT, tokenize.DEDENT, tokenize.NEWLINE)
            )
            if token.type in (tokenize.NAME, tokenize.STRING) and not docstring:
                words.append(token.string)
            if token.type not in (tokenize.COMMENT, tokenize.NL):
                previous = token
    return words


def _naming_tools() -> dict[str, list[str]]:
    from ci_runner.languages import LANGUAGE_FOLDERS

    own = tuple(f"ci_runner/languages/{f}/" for f in LANGUAGE_FOLDERS.values())
    own += tuple(f"arena/languages/{f}.py" for f in LANGUAGE_FOLDERS.values())
    found: dict[str, list[str]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative.startswith(own) or relative.startswith("arena/tasks/demo/"):
                continue
            if named := [w[:60] for w in _code_words(path) if _TOOL_NAMES.search(w)]:
                found[relative] = named
    return found


def test_tool_names_live_in_the_languages_files() -> None:
    """Which command runs tests, how its report reads, what shadows it: a language's own
    files say it, so a new language is its files and a registry line. The modules listed
    in _STILL_NAMING_TOOLS are what is left to move; one moved leaves the list."""
    found = _naming_tools()
    assert {path: words for path, words in found.items() if path not in _STILL_NAMING_TOOLS} == {}
    assert sorted(set(_STILL_NAMING_TOOLS) - set(found)) == [], "moved: take it off the list"
