"""Mage's targets as make's recipes: what `mage check` runs, read from the magefile.

Mage (magefile.org) is Go's make: a target is an exported function of a Go file built with
the `mage` tag, called by its name in any case (`mage check` runs `func Check()`), and its
prerequisites are the targets it names in `mg.Deps`, `mg.SerialDeps`, `mg.CtxDeps` or calls
itself. Its commands are Go calls, not shell lines: `sh.Run(goexe, "test", "./...")`,
`sh.RunWith(env, "go", "test", "-race", "./...")` or a helper of the project's taking the
same arguments (`runCmd(env, goexe, "test", ...)`). Each call that runs `go test` is read as
the shell line it amounts to, its literal arguments kept and a computed one left out (with
the option it is the value of), which is what ranking a leg and placing its tests need.
"""

from __future__ import annotations

import re

MAGEFILES = ("magefile.go", "magefiles/magefile.go", "mage.go", "magefiles/mage.go")
_FUNCTION = re.compile(
    r"^func\s+(?:\(\s*(?:\w+\s+)?(?P<namespace>[A-Z]\w*)\s*\)\s*)?(?P<name>[A-Z]\w*)\s*\("
    r"[^)]*\)[^{\n]*\{",
    re.MULTILINE,
)
# the Go command, as magefiles name it, then "test" and the rest of the call's arguments
_GO_TEST = re.compile(
    r"(?:\bgoexe|\bgocmd|\bgoCmd|\bmg\.GoCmd\(\)|\"go\")\s*,\s*\"test\"(?P<rest>[^)\n]*)"
)
_DEPS = re.compile(r"\bmg\.(?:Serial)?(?:Ctx)?Deps\(\s*(?:ctx\s*,\s*)?(?P<names>[^)]*)\)")
_CALL = re.compile(r"(?<![.\w])(?P<reference>[A-Z]\w*(?:\.[A-Z]\w*)?)\s*\(\s*\)")
_LITERAL = re.compile(r'^"((?:[^"\\]|\\.)*)"$')
_FLAG_WITH_VALUE = re.compile(r"^-{1,2}[\w.-]+$")


def target_name(namespace: str | None, name: str) -> str:
    """The name mage is called with: lower case, `namespace:target` for a namespace's."""
    return f"{namespace}:{name}".lower() if namespace else name.lower()


def _go_test_line(rest: str) -> str:
    """`go test` with the call's literal arguments (a computed one is left out, and so is
    the option whose value it is: `"-tags", buildTags()`)."""
    words: list[str] = []
    for item in rest.split(","):
        item = item.strip()
        if not item:
            continue
        literal = _LITERAL.match(item)
        if literal is not None:
            words.append(literal[1])
        elif words and _FLAG_WITH_VALUE.match(words[-1]) and "=" not in words[-1]:
            words.pop()
    return " ".join(["go", "test", *words])


def _target_of(reference: str) -> str:
    """A target named in Go (`Test`, `Test.Unit`, `mg.F(Build, x)` aside) as mage names it."""
    namespace, _, member = reference.strip().partition(".")
    return target_name(namespace if member else None, member or namespace)


def mage_recipes(text: str) -> dict[str, tuple[list[str], str]]:
    """Each target's (prerequisites, the shell lines its `go test` calls amount to)."""
    starts = list(_FUNCTION.finditer(text))
    recipes: dict[str, tuple[list[str], str]] = {}
    for index, found in enumerate(starts):
        end = starts[index + 1].start() if index + 1 < len(starts) else len(text)
        body = text[found.end() : end]
        lines = [_go_test_line(m["rest"]) for m in _GO_TEST.finditer(body)]
        deps = [
            _target_of(name)
            for m in _DEPS.finditer(body)
            for name in m["names"].split(",")
            if re.fullmatch(r"\s*[A-Z]\w*(?:\.[A-Z]\w*)?\s*", name)
        ]
        deps += [_target_of(m["reference"]) for m in _CALL.finditer(body)]
        name = target_name(found["namespace"], found["name"])
        recipes.setdefault(name, (deps, "\n".join(lines)))
    return recipes
