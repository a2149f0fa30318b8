"""Java's tripwires: one JUnit test class per Maven module the run's diffs reach, written into
that module's `src/test/java` (Surefire runs every `*Test` class there), in the JUnit the
module's build asks for: JUnit 5 (Jupiter) where its pom names `junit-jupiter`, else JUnit 4
where it names `junit`. A module whose build names neither (TestNG, none) gets none.

The class is named `<token>Test`, in the package of the module's first test source (sorted
by path; no package where there is none), beside the tests: a build's own checks hold it
to its rules (Error Prone with -Werror refuses a class in no package). Its report id is
`<package>.<token>Test::<method>`: the class is the site's name, the two methods' names
are the passing and failing tests'.
"""

from __future__ import annotations

import os
from pathlib import Path

from ci_runner.languages.sites import Site, plain_dir, plain_file, token
from ci_runner.tree_walk import walk

MAX_SITES = 16
MAX_FOLDERS_SEEN = 2000  # of a module's test sources, looking for its first test's package
TEST_SOURCES = "src/test/java"
SOURCE = """{package}import {test};

public class {cls} {{
    @Test
    public void {passing}() {{
    }}
{failing_test}}}
"""
FAILING_TEST = """
    @Test
    public void {failing}() {{
        {fail}("this test fails on purpose");
    }}
"""
# each JUnit's test annotation and failing call (no word in the source tells these tests
# from the module's own: only their fresh names do, which no code knows before the run)
JUNITS = {
    "jupiter": ("org.junit.jupiter.api.Test", "org.junit.jupiter.api.Assertions.fail"),
    "junit4": ("org.junit.Test", "org.junit.Assert.fail"),
}
MAX_POM_BYTES = 1024 * 1024


def read_pom(module: Path, root: Path) -> str | None:
    """The first MAX_POM_BYTES of a module's pom.xml; None where there is no plain file of
    that name inside `root` (a link out of the workspace is not followed)."""
    path = module / "pom.xml"
    if not plain_file(root, path):
        return None
    try:
        with path.open("rb") as pom:
            return pom.read(MAX_POM_BYTES).decode(errors="replace")
    except OSError:
        return None


def junit_of(module: Path, root: Path) -> str | None:
    """`jupiter` or `junit4`: what the module's pom (or, where it names neither, the root
    pom, whose dependency management a module inherits) asks for; None for neither."""
    for pom in (read_pom(module, root) or "", read_pom(root, root) or ""):
        if "junit-jupiter" in pom:
            return "jupiter"
        if "<artifactId>junit</artifactId>" in pom:
            return "junit4"
    return None


def module_of(root: Path, path: str) -> Path | None:
    """The Maven module holding `path`: the nearest folder above it with a pom.xml."""
    folder = (root / path).parent
    while True:
        if plain_file(root, folder / "pom.xml"):
            return folder
        if folder == root or root not in folder.parents:
            return None
        folder = folder.parent


def test_package(sources: Path) -> str:
    """The package of the first `.java` file under `sources` (folders sorted by name), as
    its folder names it; "" for none."""
    for seen, (top, subdirs, files) in enumerate(walk(sources)):
        subdirs.sort()
        if any(name.endswith(".java") for name in files):
            relative = os.path.relpath(top, sources)
            return "" if relative == "." else relative.replace(os.sep, ".")
        if seen >= MAX_FOLDERS_SEEN:
            break
    return ""


def plant(root: Path, touched: frozenset[str], with_failing: bool) -> list[Site]:
    """One site per module the run's diffs reach that has test sources (module doc)."""
    modules: list[Path] = []
    for path in sorted(touched):
        module = module_of(root, path)
        if module is not None and module not in modules:
            modules.append(module)
    sites = []
    for module in modules[:MAX_SITES]:
        junit = junit_of(module, root)
        if junit is None or not plain_dir(root, module / TEST_SOURCES):
            continue
        sources = module / TEST_SOURCES
        package = test_package(sources)
        if package and not all(part.isidentifier() for part in package.split(".")):
            package = ""
        name, passing = f"{token()}Test", token()
        failing = token() if with_failing else None
        test, fail = JUNITS[junit]
        source = SOURCE.format(
            package=f"package {package};\n\n" if package else "",
            cls=name,
            passing=passing,
            test=test,
            failing_test=FAILING_TEST.format(failing=failing, fail=fail) if failing else "",
        )
        folder = os.path.relpath(sources / package.replace(".", "/"), root)
        sites.append(
            Site(
                label=f"java {os.path.relpath(module, root)}",
                names=(name,),
                passing=passing,
                failing=failing,
                files={f"{folder}/{name}.java": source.encode()},
            )
        )
    return sites
