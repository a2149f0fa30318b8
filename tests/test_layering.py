"""The dependency direction of the architecture map: drivers import the engine, never each other.

`api` and `workers` meet only in `arena.vocabulary` and `arena.queues` (and the store); the
engine (`arena`) imports no driver: not `api`, not `workers`, not `cli`, the command line,
a driver like them beside them (it starts workers and the API). SQL is executed only in
`arena/store`. The map is docs/architecture.md.
"""

from __future__ import annotations

import ast
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
