"""What a step's shell text does: run tests, install dependencies, or something else.

Pure text rules over the `run:` script, one logical line at a time (backslash continuations
joined); a script the step calls (`./ci/test.sh`, `bash scripts/run_tests.sh`) is read once
through `read_file` to see whether it runs tests.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache

from ci_runner.languages import profiles
from ci_runner.languages.shell import line_groups, logical_lines
from ci_runner.workflows.brew import brew_as_apt
from ci_runner.workflows.magefiles import MAGEFILES, mage_recipes

ReadFile = Callable[[str], "str | None"]

# what the languages' own words are joined with (CommandWords): tools of no one language
_GENERIC_RUNNERS = (
    r"make\s+(?:[^\s;&|]+\s+){0,8}?(?:test|tests|check|unittest)",
    r"just\s+(?:-\S+\s+)*(?:test|tests|unittest)",
    r"bazel\s+test",
    r"rake\s+test",
    r"rspec",
    # a project's own test script
    r"(?:ruby|python\d*(?:\.\d+)?|node|bash|sh|perl)\s+(?:-\S+\s+)*"
    r"(?:\S*/)?(?:tests?/\S+|test_\S+|\S+_test|run[-_]?tests?)\.(?:rb|py|js|sh|pl)",
)
_GENERIC_INSTALLS = (
    r"(?:apt|apt-get|aptitude)\s+(?:-\S+\s+)*(?:install|update|upgrade|build-dep)\b",
    r"(?:add-apt-repository|apt-add-repository|dpkg\s+-i)\b",
    r"git\s+clone\b|wget\b|curl\b",
    r"gem\s+install\b|(?:npm|pnpm|yarn)\s+(?:-\S+\s+)*(?:install|ci|add)\b|npm\s+i\b",
)
_GENERIC_LINTS = (
    r"rubocop|pre-commit|shellcheck|eslint|prettier|codespell|yamllint|markdownlint|actionlint",
)
_GENERIC_BENIGN = (
    r"#.*|echo\b.*|set\s+[-+]\S+.*|export\s+\w+=.*|cd\s+\S+|mkdir\b.*|ls\b.*|which\b.*",
    r"\S+\s+--?version|true|:",
)


@dataclass(frozen=True)
class _Patterns:
    """The command patterns of every registered language and the generic tools, joined."""

    runners: re.Pattern[str]  # a command that runs tests
    selects_no_test: re.Pattern[str]  # ... of those, one that runs none
    installs: re.Pattern[str]  # a command that installs or fetches
    lints: re.Pattern[str]  # a command that only lints, formats or type-checks
    benign: re.Pattern[str]  # a command that changes nothing (echo, cd, a version)
    toolchains: tuple[re.Pattern[str], ...]  # a toolchain a step names


def _alternatives(words: Iterable[str]) -> str:
    return "|".join(f"(?:{word})" for word in words)


@cache
def _patterns() -> _Patterns:
    """Built once, on first use: the registry loads the languages' folders, which must not
    load while this module does."""
    languages = [profile.commands for profile in profiles()]
    runners = [w for c in languages for w in c.runs_tests] + list(_GENERIC_RUNNERS)
    installs = [w for c in languages for w in c.installs] + list(_GENERIC_INSTALLS)
    lints = [w for c in languages for w in c.lints] + list(_GENERIC_LINTS)
    benign = list(_GENERIC_BENIGN) + [w for c in languages for w in c.benign]
    return _Patterns(
        runners=re.compile(
            rf"(?:^|[\s;&|(`'\"/])(?:{_alternatives(runners)})(?=$|[\s;&|)`'\"])", re.MULTILINE
        ),
        selects_no_test=re.compile(_alternatives(w for c in languages for w in c.selects_no_test)),
        installs=re.compile(
            rf"^(?:(?:env\s+)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*)(?:{_alternatives(installs)})"
        ),
        lints=re.compile(
            r"^(?:(?:poetry|uv|pdm|hatch|pipenv)\s+run\s+|python\d*(?:\.\d+)?\s+-m\s+|npx\s+)?"
            rf"(?:{_alternatives(lints)})\b"
        ),
        benign=re.compile(rf"^(?:{_alternatives(benign)})$"),
        toolchains=tuple(c.names_toolchain for c in languages if c.names_toolchain is not None),
    )


def test_runners() -> re.Pattern[str]:
    """A command that runs tests, of any registered language or a generic tool (make, just,
    a test script)."""
    return _patterns().runners


_SUDO = re.compile(r"(?:^|(?<=[\s;&|(]))sudo\s+(?:-u\s+\S+\s+|-[A-Za-z]+\s+)*")
# side effects on the system (links, copies into system paths): setup, run once at build time
_SYSTEM = re.compile(
    r"^(?:(?:ln|cp|mv|mkdir|install|chmod|chown|tee|touch|rm)\s.*\s"
    r"/(?:usr|etc|opt|bin|sbin|lib|lib64|var|root|srv)(?:/|\s|$)"
    r"|(?:update-alternatives|ldconfig|locale-gen|update-locale|sysctl|useradd|groupadd"
    r"|usermod|update-ca-certificates)\b)"
)
# installs from registries that the environment build may not reach: tried, not required
_MAYBE_UNREACHABLE = re.compile(r"\b(gem|npm|pnpm|yarn)\s+(?:-\S+\s+)*(?:install|ci|add|i)\b")
# commands that only exist on macOS or Windows runners (Homebrew on Linux too: not provided)
_FOREIGN = re.compile(
    r"(?:^|[\s;&|(`])(?:brew|choco|winget|scoop|Install-Module|Install-Package|xcode-select"
    r"|xcrun|softwareupdate|hdiutil|pkgutil|Set-ExecutionPolicy)(?=\s|$)|linuxbrew",
    re.IGNORECASE,
)
_DOCKER = re.compile(
    r"(?:^|[\s;&|(`])(?:docker(?:-compose)?|podman)\s+(?:-\S+\s+)*[a-z]",
    re.MULTILINE,
)
_LOCAL_PROJECT = re.compile(
    r"pip3?\s+install\s+(?:(?:-[^-e\s]\S*|--\S+)\s+)*['\"]?\.(?:\[[^\]]*\])?['\"]?(?:\s|$)"
    # a Node install of the project's own dependencies (no package named): node_modules
    # lands in the workspace, which no image keeps; runs repeat it from the cached store
    r"|^\s*(?:pnpm\s+(?:install|i)|npm\s+(?:ci|install|i))(?:\s+--?[\w-]+(?:=\S+)?)*\s*$"
)
_STATE = re.compile(r"^(?:cd\s+\S+|export\s+\w+=.*|set\s+[-+]\S+.*)$")
_SCRIPT = re.compile(
    r"(?:^|[\s;&|(])(?:(?:bash|sh|source|\.)\s+)?(?P<path>\.{0,2}/?[\w.-]+(?:/[\w.-]+)*\.(?:sh|bash))\b"
    r"|(?:^|[\s;&|(])(?P<exe>\./[\w.-]+(?:/[\w.-]+)*)(?=$|[\s;&|)])",
    re.MULTILINE,
)


# conda, mamba and micromamba make their own environments, which Arena cannot build
_CONDA = re.compile(
    r"(?:^|[\s;&|(`])(?:conda|mamba|micromamba)\s+(?:-\S+\s+)*"
    r"(?:install|create|env|activate|run|update|init|config|develop|build)\b",
    re.MULTILINE,
)


def uses_conda(script: str) -> bool:
    """The script runs conda, mamba or micromamba to make or use an environment."""
    return _CONDA.search("\n".join(logical_lines(script))) is not None


def _commands(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"&&|\|\||;", line) if c.strip()]


def named_toolchain(script: str) -> str | None:
    """The first toolchain the script names (rustup's channel or version), or None."""
    text = "\n".join(logical_lines(script))
    matches = [m for pattern in _patterns().toolchains if (m := pattern.search(text))]
    found = min(matches, key=lambda m: m.start(), default=None)
    if found is None:
        return None
    name = found["plus"] or found["named"]
    return name.removesuffix("-x86_64-unknown-linux-gnu")


def drop_sudo(script: str) -> str:
    return _SUDO.sub("", script)


def is_install(command: str) -> bool:
    """The command installs or fetches, or changes the system (setup, run once at build)."""
    command = drop_sudo(command)
    return _patterns().installs.match(command) is not None or _SYSTEM.match(command) is not None


def may_be_unreachable(script: str) -> str | None:
    """The tool of an install from a registry the build may not reach (gem, npm...)."""
    found = _MAYBE_UNREACHABLE.search(script)
    return found[1] if found else None


def uses_docker(script: str) -> bool:
    """The script runs docker, docker-compose, `docker compose` or podman."""
    return _DOCKER.search("\n".join(logical_lines(script))) is not None


def only_lints(script: str) -> bool:
    """Every command of the script lints, formats or type-checks (or only echoes, cds...)."""
    commands = [drop_sudo(c) for line in logical_lines(script) for c in _commands(line)]
    lints = [c for c in commands if _patterns().lints.match(c)]
    return bool(lints) and all(c in lints or _patterns().benign.match(c) for c in commands)


# a logical line as it stays: None to drop it, else its replacement lines and what of it was
# dropped (a brew formula without a Debian package)
_LineRule = Callable[[str], "tuple[list[str] | None, list[str]]"]


def _rewrite_lines(script: str, rule: _LineRule) -> tuple[str, list[str]]:
    """The script with each logical line kept as written (its raw lines, continuations and
    all), replaced, or dropped by `rule`; and what was dropped."""
    kept: list[str] = []
    dropped: list[str] = []
    raw_lines = script.splitlines()
    start = 0
    for after, line in line_groups(script):
        group = raw_lines[start:after]
        start = after
        replaced, lost = rule(line)
        dropped.extend(lost)
        if replaced is None:
            dropped.append(line)
        else:
            kept.extend(group if replaced == [line] else replaced)
    return "\n".join(kept).strip(), dropped


def _foreign_rule(line: str) -> tuple[list[str] | None, list[str]]:
    apt, unknown = brew_as_apt(line)
    if apt is not None:
        return [apt], [f"brew formula {f} (no Debian package known)" for f in unknown]
    return (None, []) if _FOREIGN.search(line) else ([line], [])


def without_foreign(script: str) -> tuple[str, list[str]]:
    """The script without its macOS/Windows-only lines (choco, xcode...), and those lines.

    A `brew install` line becomes `apt-get install` of the Debian packages that give the
    same formulae (see `brew`); the formulae without one are listed as dropped."""
    return _rewrite_lines(script, _foreign_rule)


# what a container cannot do and a test run does not need: kernel parameters are the host's
# (`sysctl -w vm.mmap_rnd_bits=28`, ASan's usual workaround, or a write under /proc/sys), and
# the core-dump limit only decides whether a crash leaves a core file
_HOST_ONLY = re.compile(
    r"^(?:sysctl\s+(?:-\w+\s+)*(?:-w\s+|-p\b|[\w.]+=)"
    r"|(?:echo|printf)\s.*\|\s*tee\s+(?:-a\s+)?/proc/sys/"
    r"|(?:echo|printf)\s.*>+\s*/proc/sys/"
    r"|ulimit\s+(?:-\w*c\w*)\s+\S+)"
)


def is_host_only(command: str) -> bool:
    """The command sets what only the host can (a kernel parameter, the core-dump limit)."""
    return _HOST_ONLY.match(drop_sudo(command).strip()) is not None


def _host_only_rule(line: str) -> tuple[list[str] | None, list[str]]:
    commands = _commands(line)
    return (None, []) if commands and all(is_host_only(c) for c in commands) else ([line], [])


def without_host_only(script: str) -> tuple[str, list[str]]:
    """The script without the lines a container cannot honour, and those lines: each of their
    commands sets a kernel parameter or the core-dump limit, which the run cannot change
    and its tests do not depend on."""
    return _rewrite_lines(script, _host_only_rule)


# a command that runs or sources a script of the repository: `source $GITHUB_WORKSPACE/ci/
# install.sh`, `. ./deps.sh`, `bash tools/setup.sh`, `./install-deps.sh`
_RUNS_SCRIPT = re.compile(
    r"^(?:(?:source|\.|bash|sh)\s+)?(?P<path>(?:\$\{?\w+\}?/|\.{0,2}/)?[\w.-]+"
    r"(?:/[\w.-]+)*\.(?:sh|bash))(?:\s|$)"
    r"|^(?P<exe>\./[\w.-]+(?:/[\w.-]+)*)(?:\s|$)"
)
_WORKSPACE_VAR = re.compile(r"^\$\{?GITHUB_WORKSPACE\}?/")
_LEADING_VAR = re.compile(r"^(?:\$\{?\w+\}?\s+)+")  # `$RETRY sudo apt-get ...` (empty or a retrier)
_MAX_SCRIPT_DEPTH = 3


def _script_path(command: str, folder: str) -> str | None:
    """The repository path of the script `command` runs or sources, from `folder`; a path
    behind another variable (`"$script_dir"/x.sh`) is taken to be beside the calling script
    (quotes are dropped: they only group the path)."""
    found = _RUNS_SCRIPT.match(command.strip().replace('"', "").replace("'", ""))
    if found is None:
        return None
    relative = found["path"] or found["exe"]
    if _WORKSPACE_VAR.match(relative):
        path = _WORKSPACE_VAR.sub("", relative)
    elif relative.startswith("$"):
        path = posixpath.join(folder, relative.split("/", 1)[1])
    else:
        path = posixpath.join(folder, relative)
    path = posixpath.normpath(path)
    return None if path.startswith(("../", "/")) else path


def called_scripts(script: str, workdir: str, read_file: ReadFile) -> list[str]:
    """The text of each repository script that `script` runs or sources from `workdir`, and
    of those they source in turn (three levels at most): what the step runs besides its own
    lines, as GitHub's runner would run it."""
    pending = [
        (command, workdir, 0) for line in logical_lines(script) for command in _commands(line)
    ]
    found: list[str] = []
    while pending:
        current, folder, depth = pending.pop(0)
        path = _script_path(drop_sudo(_LEADING_VAR.sub("", current)), folder)
        if path is None or depth >= _MAX_SCRIPT_DEPTH or (body := read_file(path)) is None:
            continue
        body = body[: 256 * 1024]
        found.append(body)
        inner = [c for line in logical_lines(body) for c in _commands(line)]
        pending.extend((command, posixpath.dirname(path), depth + 1) for command in inner)
    return found


def runs_installer(command: str, workdir: str, read_file: ReadFile) -> bool:
    """The command runs a repository script that installs (GitHub's runner lets a step source
    `ci/install-deps.sh`), following the scripts it sources; never one that runs tests, whose
    work must stay in CI runs."""
    lines = [
        line for body in called_scripts(command, workdir, read_file) for line in logical_lines(body)
    ]
    if any(test_runners().search(line) for line in lines):
        return False
    commands = (drop_sudo(_LEADING_VAR.sub("", c)) for line in lines for c in _commands(line))
    return any(is_install(c) for c in commands)


def is_setup(script: str, installs: Callable[[str], bool] = is_install) -> bool:
    """Every command installs or fetches (or only echoes, cds, sets): a setup step.
    `installs` tells an install (`runs_installer` also follows the repository's scripts)."""
    commands = [c for line in logical_lines(script) for c in _commands(line)]
    installing = [c for c in commands if installs(c)]
    return bool(installing) and all(
        c in installing or _patterns().benign.match(c) for c in commands
    )


def split_installs(
    script: str, installs: Callable[[str], bool] = is_install
) -> tuple[str, str] | None:
    """A step that installs first and then does other work, as (setup part, CI part).

    The CI part keeps the remaining lines verbatim, preceded by the `cd`/`export`/`set`
    commands of the install lines (they shape what follows) and by any install of the
    project itself (`pip install .` copies the tree, so every CI run must repeat it).
    """
    raw_lines = script.splitlines()
    end = 0
    installing = 0
    carried: list[str] = []
    for after, line in line_groups(script):
        commands = _commands(line)
        if not all(installs(c) or _patterns().benign.match(c) for c in commands):
            break
        installing += sum(1 for c in commands if installs(c))
        carried.extend(c for c in commands if _STATE.match(c) or installs_local_project(c))
        end = after
    rest = "\n".join(raw_lines[end:]).strip()
    if not installing or not rest:
        return None
    setup = "\n".join(raw_lines[:end]).strip()
    return setup, "\n".join([*carried, rest])


def local_project_installs(script: str) -> str:
    """The lines of `script` that install the project itself (what a CI run repeats)."""
    return "\n".join(line for line in logical_lines(script) if _LOCAL_PROJECT.search(line))


def installs_local_project(script: str) -> bool:
    """`pip install .` copies the tree as it is at build time, and `pnpm install` (or `npm ci`)
    fills the workspace's node_modules: a CI run must install them again (from the cache)."""
    return any(_LOCAL_PROJECT.search(line) for line in logical_lines(script))


def _shown(found: re.Match[str]) -> str:
    return found.group(0).strip().strip(";&|(`'\"/").strip()


_TARGET_TOOL = re.compile(
    r"(?:^|[\s;&|(])(?P<tool>make|gmake|just|mage)\s+(?P<args>[^;&|\n]*)", re.MULTILINE
)
_MAKE_RULE = re.compile(r"^(?P<targets>[\w.%/ -]+?)\s*::?(?!=)(?P<deps>[^\n=]*)$", re.MULTILINE)
_JUST_RECIPE = re.compile(
    r"^@?(?P<name>[\w-]+)(?P<params>(?:\s+[*+$]?[\w-]+(?:=(?:\"[^\"]*\"|'[^']*'|\S+))?)*)\s*:"
    r"(?!=)(?P<deps>[^\n]*)$",
    re.MULTILINE,
)
_MAX_DEPTH = 6


@dataclass(frozen=True)
class _TargetTool:
    """How a target runner's command line names its file and target."""

    files: tuple[str, ...]  # the file it reads, when no option names one
    folders: tuple[str, ...] = ("-C", "--directory", "-d", "--working-directory")
    naming: tuple[str, ...] = ("-f", "--file", "--justfile")  # options naming its file
    valued: tuple[str, ...] = ()  # other options that take a value
    target: re.Pattern[str] = re.compile(r"[\w.-]+")
    any_case: bool = False  # its targets answer to any case


_TARGET_TOOLS = {
    "make": _TargetTool(("GNUmakefile", "makefile", "Makefile")),
    "just": _TargetTool(("justfile", "Justfile", ".justfile")),
    "mage": _TargetTool(
        MAGEFILES,
        folders=("-d", "-w"),
        naming=(),
        valued=("-t", "-gocmd", "-goos", "-goarch", "-ldflags", "-compile"),
        target=re.compile(r"[\w.:-]+"),  # `namespace:target`
        any_case=True,
    ),
}


def _target_and_dir(tool: str, args: str, workdir: str) -> tuple[str, str, str | None] | None:
    """(first target, directory, file named by -f) of a make/just/mage command line."""
    words = args.split()
    known = _TARGET_TOOLS[tool]
    directory, named, at = workdir, None, 0
    while at < len(words):
        word = words[at]
        if word in known.folders and at + 1 < len(words):
            directory = posixpath.normpath(posixpath.join(directory, words[at + 1]))
            at += 2
        elif word in known.naming and at + 1 < len(words):
            named = words[at + 1]
            at += 2
        elif word in known.valued:
            at += 2
        elif word.startswith("-") or "=" in word:
            at += 1
        else:
            target = word.strip("'\"")
            if not known.target.fullmatch(target):
                return None
            return (target.lower() if known.any_case else target), directory, named
    return None


def _recipes(tool: str, text: str) -> dict[str, tuple[list[str], str]]:
    """Each target's (prerequisites, recipe text) in a Makefile, justfile or magefile."""
    if tool == "mage":
        return mage_recipes(text)
    pattern = _JUST_RECIPE if tool == "just" else _MAKE_RULE
    matches = list(pattern.finditer(text))
    recipes: dict[str, tuple[list[str], str]] = {}
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        body = "\n".join(
            line for line in text[match.end() : end].splitlines() if line[:1] in ("\t", " ")
        )
        deps_text = match["deps"].split("#")[0]
        deps = re.findall(r"\(\s*([\w-]+)|([\w.-]+)", deps_text)
        names = [a or b for a, b in deps]
        targets = [match["name"]] if tool == "just" else match["targets"].split()
        for target in targets:
            recipes.setdefault(target, (names, body))
    return recipes


@dataclass(frozen=True)
class RunnerLine:
    """A shell line that runs a test runner, and where it runs: the step's folder, or the
    folder of the Makefile or justfile whose recipe holds it (`make -C dir`)."""

    line: str
    directory: str
    via: str | None = None  # `Makefile: make test-unit`, `scripts/test.sh`


def _target_runner_lines(script: str, workdir: str, read_file: ReadFile) -> list[RunnerLine]:
    """The test-runner lines a `make TARGET` / `just RECIPE` / `mage TARGET` line runs, read
    from the recipes of the first target whose recipes (or their prerequisites') run one."""
    for match in _TARGET_TOOL.finditer(script):
        tool = "make" if match["tool"] == "gmake" else match["tool"]
        found = _target_and_dir(tool, match["args"], workdir)
        if found is None:
            continue
        target, directory, named = found
        names = [named] if named else _TARGET_TOOLS[tool].files
        for name in names:
            path = posixpath.normpath(posixpath.join(directory, name))
            if path.startswith(("../", "/")):
                continue
            text = read_file(path)
            if text is None:
                continue
            recipes = _recipes(tool, text[: 256 * 1024])
            pending, seen = [(target, 0)], set()
            while pending:
                current, depth = pending.pop(0)
                if current in seen or current not in recipes or depth > _MAX_DEPTH:
                    continue
                seen.add(current)
                deps, body = recipes[current]
                lines = [line for line in logical_lines(body) if runs_tests(line)]
                if lines:
                    via = f"{path}: {match['tool']} {target}"
                    folder = posixpath.dirname(path) or "."
                    return [RunnerLine(line, folder, via) for line in lines]
                pending.extend((d, depth + 1) for d in deps)
            break
    return []


def runs_tests(line: str) -> bool:
    """The line runs a test runner, and selects tests for it to run (module's table)."""
    return (
        test_runners().search(line) is not None and _patterns().selects_no_test.search(line) is None
    )


def _runs_make_or_just(line: str) -> bool:
    found = test_runners().search(line)
    return found is not None and _shown(found).startswith(("make", "just"))


def runner_lines(script: str, workdir: str, read_file: ReadFile) -> list[RunnerLine]:
    """The lines that run a test runner, as `test_runner` finds it: in the script itself,
    in the make/just recipes it names, or in a script file it calls."""
    lines = logical_lines(script)
    direct = [line for line in lines if runs_tests(line)]
    plain = [line for line in direct if not _runs_make_or_just(line)]
    if plain:
        return [RunnerLine(line, workdir) for line in plain]
    if found := _target_runner_lines("\n".join(lines), workdir, read_file):
        return found
    if direct:
        return [RunnerLine(line, workdir) for line in direct]
    for match in _SCRIPT.finditer("\n".join(lines)):
        relative = match["path"] or match["exe"]
        path = posixpath.normpath(posixpath.join(workdir, relative))
        if path.startswith(("../", "/")):
            continue
        body = read_file(path)
        if body is None:
            continue
        inner = [line for line in logical_lines(body[: 256 * 1024]) if runs_tests(line)]
        if inner:
            return [RunnerLine(line, workdir, path) for line in inner]
    return []


def test_runner(script: str, workdir: str, read_file: ReadFile) -> str | None:
    """The test runner the script runs: directly, through a make target or just recipe whose
    recipes it reads, or through a script file it calls (`runner_lines`), as shown in notes."""
    found = runner_lines(script, workdir, read_file)
    if not found:
        return None
    inner = test_runners().search(found[0].line)
    assert inner is not None
    return _shown(inner) + (f" (in {found[0].via})" if found[0].via else "")
