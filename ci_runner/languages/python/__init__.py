"""Python: Debian's python3 with pytest, tox and nox's interpreters shimmed, JUnit reports."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from ci_runner.env_layout import CACHE_DIR, NODE_CACHES, SYSTEM_PATH, VENV, WHEELHOUSE
from ci_runner.image_layout import WORKSPACE
from ci_runner.languages.profile import (
    COMMAND_END,
    COMMAND_START,
    CommandWords,
    LanguageProfile,
    ReadFile,
    TripwireForm,
)
from ci_runner.languages.python import results, scope
from ci_runner.languages.python import tripwires as tripwires
from ci_runner.languages.python import twins as python_twins
from ci_runner.languages.reporting import Reporting, with_appended
from ci_runner.languages.sites import Site
from ci_runner.languages.toolchain import (
    ToolchainChoice,
    ToolchainRequest,
    bookworm_tag,
    from_suites,
    major_minor,
    never,
    official_major_minor,
    request_as_asked,
    table,
    toml,
)
from ci_runner.languages.twins import TwinForm
from ci_runner.pipeline import Pipeline, ReportFormat, ReportSpec, Step

SUITE_VERSIONS = {"bookworm": "3.11", "trixie": "3.13"}

REPORT_FILE = "arena-report.xml"
# JUnit to the report file, and the short summary of every test for the console fallback
PYTEST_OPTIONS = f"-rap --junitxml={WORKSPACE}/{REPORT_FILE}"
_LEGACY_PASSENV = re.compile(r"^\s*passenv\s*=", re.MULTILINE)
TOX_FILES = ("tox.ini", "setup.cfg", "pyproject.toml")

_PREPARE = f"python3 -m venv --system-site-packages {VENV}"
_COLLECT = f"""mkdir -p {WHEELHOUSE}
pip freeze --local --exclude-editable > /tmp/arena-frozen.txt
python3 - > /tmp/arena-build-requires.txt <<'EOF'
import pathlib, tomllib
path = pathlib.Path("pyproject.toml")
if path.is_file():
    requires = tomllib.loads(path.read_text()).get("build-system", {{}}).get("requires", [])
    print("\\n".join(requires))
EOF
pip wheel --quiet --wheel-dir {WHEELHOUSE} -r /tmp/arena-frozen.txt \\
    -r /tmp/arena-build-requires.txt pip setuptools wheel
# virtualenvs the warm-up's test runners made (tox, nox, a venv of a script): what they
# installed goes to the wheelhouse too, each on its own (their pins may differ), local
# builds of the project left out
find {WORKSPACE} /tmp -name pyvenv.cfg -not -path '{VENV}/*' 2>/dev/null |
while read -r cfg; do
  env_python="$(dirname "$cfg")/bin/python"
  [ -x "$env_python" ] || continue
  pip --python "$env_python" freeze --local --exclude-editable 2>/dev/null |
    grep -v -e ' @ file:' -e '^-e ' > /tmp/arena-env-frozen.txt || true
  if [ -s /tmp/arena-env-frozen.txt ]; then
    pip wheel --quiet --no-deps --wheel-dir {WHEELHOUSE} -r /tmp/arena-env-frozen.txt
  fi
done
rm -f /tmp/arena-frozen.txt /tmp/arena-build-requires.txt /tmp/arena-env-frozen.txt"""

# a command that runs Python tests (where tripwires go), and the words of any Python test
# runner in a step's command (how well a leg fits the language)
_RUNNER = re.compile(
    COMMAND_START + r"(?:py\.?test|tox|nox|nose2?|trial|python\d*(?:\.\d+)?\s+(?:-\S+\s+)*-m\s+"
    r"(?:pytest|unittest|nose2?)|manage\.py\s+test|setup\.py\s+test|hatch\s+test)" + COMMAND_END
)
_RUNNER_WORDS = re.compile(r"py\.?test|\btox\b|\bnox\b|unittest|python|hatch|pdm|poetry|\buv\b")
_PYTEST_LINE = re.compile(r"py\.?test")
# as a shell word, or a quoted one of a noxfile's `session.run("pytest", "-x")`
_PYTEST_FAILFAST = re.compile(
    r"(?:^|\s|[\s,(\[][\"'])(?:-[A-Za-wyz]*x[A-Za-z]*|--exitfirst|--maxfail|--sw|--stepwise)"
    r"(?=$|[\s=\"'])"
)


def requested_version(files: Mapping[str, str]) -> ToolchainRequest | None:
    """`.python-version`, else the lower bound of `requires-python`."""
    if files.get(".python-version", "").strip():
        return ToolchainRequest(files[".python-version"].split()[0], ".python-version")
    requires = table(toml(files.get("pyproject.toml")), "project").get("requires-python")
    if isinstance(requires, str):
        lower = re.search(r">=?\s*(\d+\.\d+)", requires)
        if lower:
            return ToolchainRequest(lower.group(1), f"requires-python {requires!r}")
    return None


def choose_toolchain(request: ToolchainRequest | None) -> ToolchainChoice:
    """The closest suite's Python; the version asked for is shimmed to it, and tox and nox
    told what they run on."""
    choice = from_suites("python", SUITE_VERSIONS, request)
    wanted = major_minor(request.version) if request else None
    if choice.deviation is None or wanted is None:
        return choice
    asked = f"{wanted[0]}.{wanted[1]}"
    shims = ((f"python{asked}", f"/usr/bin/python{choice.version}"),)
    # tox never skips the interpreter it cannot find (a skip passes with no test run); nox
    # runs its sessions on the interpreter there is
    env = (("TOX_SKIP_MISSING_INTERPRETERS", "false"), ("NOXFORCEPYTHON", choice.version))
    deviation = (
        f"{choice.deviation}: python{asked} there is Python {choice.version}, nox runs on "
        f"{choice.version} (NOXFORCEPYTHON), tox's py{asked.replace('.', '')} environments fail "
        f"for want of Python {asked}"
    )
    return replace(choice, shims=shims, env=env, deviation=deviation)


def relaxations(choice: ToolchainChoice, files: Mapping[str, str]) -> tuple[str, ...]:
    """A `requires-python` the chosen Python does not meet."""
    requires = table(toml(files.get("pyproject.toml")), "project").get("requires-python")
    if not isinstance(requires, str):
        return ()
    try:
        allowed = SpecifierSet(requires)
    except InvalidSpecifier:
        return (f"requires-python {requires!r} is not a valid specifier; ignored",)
    if allowed.contains(Version(choice.version), prereleases=True):
        return ()
    return (f"requires-python {requires!r} ignored: runs on Python {choice.version}",)


def tox_pass_env_key(read_file: ReadFile, workdir: str) -> str:
    """The spelling of tox's pass_env that the project's config uses: an override under the
    other spelling would shadow the project's own list (its PGHOST would no longer pass)."""
    for name in TOX_FILES:
        text = read_file(posixpath.normpath(posixpath.join(workdir, name)))
        if text and _LEGACY_PASSENV.search(text):
            return "passenv"
    return "pass_env"


def report_rule(
    steps: list[Step],
    runners: dict[str, str],
    notes: list[str],
    setup: Sequence[Step],
    read_file: ReadFile,
) -> Reporting:
    """Every pytest run writes JUnit, whatever its command line says; tox 4 passes it on."""
    pytest_env = {"PYTEST_ADDOPTS": PYTEST_OPTIONS}
    tox_steps = [s for s in steps if "tox" in runners.get(s.name, "")]
    if tox_steps:
        key = tox_pass_env_key(read_file, tox_steps[0].workdir)
        pytest_env["TOX_OVERRIDE"] = f"testenv.{key}+=PYTEST_ADDOPTS"
        notes.append(f"  tox: PYTEST_ADDOPTS passed through with TOX_OVERRIDE ({key})")
    steps = [with_appended(s, "PYTEST_ADDOPTS", PYTEST_OPTIONS) for s in steps]
    report = ReportSpec(format=ReportFormat.JUNIT, path=REPORT_FILE)
    return Reporting(report, pytest_env, steps, appended=("PYTEST_ADDOPTS",))


def _may_fail(root: Path, pipeline: Pipeline, lines: list[str], last: re.Match[str]) -> bool:
    """No `-x`, `--maxfail` or `--stepwise` on a pytest line, in PYTEST_ADDOPTS or in the
    pytest configuration's addopts."""
    _, addopts = tripwires.pytest_options(root, (s.workdir for s in pipeline.steps))
    options = [addopts, *pipeline.env_values("PYTEST_ADDOPTS")]
    options += [line[m.end() :] for line in lines if (m := _PYTEST_LINE.search(line))]
    return not any(_PYTEST_FAILFAST.search(text) for text in options)


def _plant(root: Path, pipeline: Pipeline, touched: frozenset[str], failing: bool) -> list[Site]:
    return tripwires.plant(root, [s.workdir for s in pipeline.steps], touched, failing)


COMMANDS = CommandWords(
    runs_tests=(
        r"py\.?test",
        r"tox",
        r"nox",
        r"python\d*(?:\.\d+)?\s+-m\s+unittest",
        r"(?:hatch|pdm|poetry|uv|pixi)\s+run\s+(?:[\w-]+:)?(?:test|tests|unittest|pytest)",
    ),
    selects_no_test=(r"py\.?test\b.*?\s(?:--collect-only|--co)(?=$|[\s;&|)])",),
    installs=(
        r"(?:python\d*(?:\.\d+)?\s+-m\s+)?pip3?\s+install\b",
        r"pipx\s+install\b",
        r"poetry\s+(?:-\S+\s+\S+\s+)*install\b",
        r"pdm\s+install\b",
        r"pipenv\s+install\b",
        r"uv\s+(?:pip\s+install|sync|tool\s+install|venv)\b",
        r"poetry\s+(?:-\S+\s+\S+\s+)*(?:add|lock|env\s+use|self\s+add)\b",
    ),
    lints=(r"flake8|pflake8|ruff|black|isort|mypy|pyright|pylint|pycodestyle|pydocstyle",),
    benign=(r"(?:python\d*(?:\.\d+)?\s+-m\s+)?pip3?\s+(?:list|freeze|show)\b.*",),
    task_files=("tox.ini", "noxfile.py"),
)

# how a warm-up run says it could not set itself up (ci_runner.warmup): pip, and pip
# inside tox, nox and build isolation
SETUP_FAILURES = (
    ("pip could not find a version", r"ERROR: Could not find a version that satisfies"),
    ("pip found no distribution", r"ERROR: No matching distribution found for"),
    ("pip could not resolve the requirements", r"ResolutionImpossible"),
    ("a dependency failed to build", r"ERROR: Failed building wheel for"),
    ("a dependency failed to build", r"ERROR: Could not build wheels for"),
    ("a dependency failed to build", r"ERROR: Failed to build installable wheels"),
    ("a dependency failed to build", r"error: subprocess-exited-with-error"),
    ("pip could not install", r"ERROR: Could not install packages due to"),
    ("uv could not resolve", r"No solution found when resolving"),
    ("tox could not install", r"ERROR: could not install deps"),
    ("the Python interpreter is missing", r"could not find python interpreter with spec"),
    ("the Python interpreter is missing", r"nox > .*Python interpreter \S+ not found"),
    ("nox could not install", r"nox > Command .*(?:pip|uv) install .* failed with exit code"),
    ("the tests could not start", r"ImportError while loading conftest"),
)

PROFILE = LanguageProfile(
    name="python",
    packages=("python3", "python3-pytest", "python3-venv", "python-is-python3"),
    official_packages=(),
    official_repository="python",
    official_setup="RUN python3 -m pip install --no-cache-dir pytest\n",
    suite_versions=SUITE_VERSIONS,
    request_files=(".python-version", "pyproject.toml"),
    requested_version=requested_version,
    choose_toolchain=choose_toolchain,
    settle_request=request_as_asked,
    official_version=official_major_minor,
    official_tag=bookworm_tag,
    official_lacks=never,
    relaxations=relaxations,
    runtime_env={
        "VIRTUAL_ENV": VENV,
        "PATH": f"{VENV}/bin:{SYSTEM_PATH}",
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": WHEELHOUSE,
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        # poetry's virtualenvs and cache in the image's cache, where the build made them
        # (as root, whose HOME a CI run's user does not share)
        "POETRY_VIRTUALENVS_PATH": f"{CACHE_DIR}/poetry/virtualenvs",
        "POETRY_CACHE_DIR": f"{CACHE_DIR}/poetry/cache",
        **NODE_CACHES,
    },
    offline_only=("PIP_NO_INDEX", "npm_config_offline"),
    dependency_manifest=None,
    declares_dependencies=lambda text: False,
    runner_words=_RUNNER_WORDS,
    commands=COMMANDS,
    matrix_keys=("python-version", "python"),
    report_rule=report_rule,
    setup_failures=SETUP_FAILURES,
    results=results.RESULTS,
    scope_rules=(scope.SCOPE,),
    typical_image_mb=275,
    typical_env_layer_mb=150,
    prepare=_PREPARE,
    collect=_COLLECT,
    fetch_requirements=lambda wanted: f"pip wheel --quiet --wheel-dir {WHEELHOUSE} {wanted}",
    # libraries GitHub's runner has that packages built from source link against (psycopg2
    # needs pg_config and libpq, any C extension Python.h and a compiler)
    runner_libraries=("gcc", "libc6-dev", "python3-dev", "libpq-dev", "pkg-config", "libffi-dev"),
    # tox and nox make virtualenvs and pip-install the repo's test deps into them: the CI
    # steps run once with network, before the collection keeps what they fetched
    warm_online=True,
    tripwires=TripwireForm(
        runner=_RUNNER,
        report_format=ReportFormat.JUNIT,
        plant=_plant,
        may_fail=_may_fail,
        apart=tripwires.apart_command,
        twins=TwinForm(
            suffixes=(".py",), make=python_twins.make_twins, original_of=python_twins.original_of
        ),
    ),
)
