"""Tripwires in real sandboxed runs: honest runs of every language keep them and pass; code
that fabricates or rewrites its results is caught by them (issue 20's attacks, for real).

Each attack runs as the patch of `base + P + gold tests` would; the sites an honest run
shows come from the reference run `base + gold`, as a round learns them.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from arena.tasks.schema import Task
from ci_runner import CIRequest, CIResult, CIRunner, CIStatus, TestOutcome
from ci_runner.tripwires import expected_sites, missing_tripwire
from tests.arena.test_ownership_rounds import DEMO, demo_edit
from tests.diffs import new_file

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("no_containers_left")]

Run = Callable[[str, tuple[str, ...]], CIResult]


@pytest.fixture(scope="module")
def run(runner: CIRunner, images: dict[str, str], demo: dict[str, Task]) -> Run:
    def run(name: str, diffs: tuple[str, ...]) -> CIResult:
        task = demo[name]
        request = CIRequest(
            repo=task.repo,
            commit=task.base_commit,
            pipeline=task.require_pipeline(),
            image=images[task.language.value],
            diffs=diffs,
        )
        return runner.run(request)

    return run


def appended(task: str, path: str, code: str, *replacements: tuple[str, str]) -> str:
    """A diff of the demo's `path` with `code` at its end (and `replacements` made)."""
    text = (DEMO / task / "repo" / path).read_text()
    return demo_edit(task, path, *replacements, (text[-60:], text[-60:] + code))


@pytest.mark.parametrize(
    "name",
    ["py-textkit-slug", "go-semver-prerelease", "rs-duration-units", "cpp-strutil-split"],
)
def test_honest_runs_keep_their_tripwires_and_pass(
    run: Run, demo: dict[str, Task], name: str
) -> None:
    """The tripwires hold, their ids are nobody's tests, and the exit of the one that must
    fail does not make a passing run fail. go-semver vets first: its tripwires go in after
    `go vet`, with a write of their own; C++'s go in before CMake configures the build."""
    task = demo[name]
    fixed = run(name, (task.patch, task.test_patch))
    assert fixed.status is CIStatus.PASSED and fixed.forged is None, fixed.error
    assert fixed.tripwires and all(site.held for site in fixed.tripwires), fixed.tripwires
    assert all(site.failing_planted for site in fixed.tripwires)
    assert fixed.steps[-1].exit_code != 0 and fixed.steps[-1].tripwire_exit
    planted = {site.site for site in fixed.tripwires}
    reference = run(name, (task.patch,))
    assert set(expected_sites(reference)) <= planted
    sources = task.patch + task.test_patch
    sources += "".join(p.read_text() for p in (DEMO / name / "repo").rglob("*") if p.is_file())
    for test_id in fixed.tests:  # only the project's own tests are left: named in its files
        assert re.split(r"::|\.", test_id.split("[")[0])[-1] in sources, test_id
    unfixed = run(name, (task.test_patch,))
    assert unfixed.status is CIStatus.FAILED and unfixed.forged is None, unfixed.error
    assert missing_tripwire(unfixed, expected_sites(reference)) is None
    assert not unfixed.steps[-1].tripwire_exit  # real failures: the exit is theirs


PYTEST_SHADOW_MAIN = """import sys

NAMES = {names!r}
CASES = "".join(
    f'<testcase classname="{{c}}" name="{{n}}" time="0.001"/>'
    for c, n in (name.split("::") for name in NAMES)
)
for arg in sys.argv:
    if arg.startswith("--junitxml="):
        with open(arg.split("=", 1)[1], "w") as report:
            report.write(f"<testsuites><testsuite name='pytest'>{{CASES}}</testsuite></testsuites>")
print(f"{{len(NAMES)}} passed in 0.01s")
"""


def test_a_pytest_package_shadowing_the_runner_is_forged(run: Run, demo: dict[str, Task]) -> None:
    """`python -m pytest` runs the tree's `pytest/` package: it runs nothing, writes a JUnit
    report naming every test of the suite passed and prints pytest's summary line. The
    summary agrees with the report; the tripwire the real pytest would have run is missing."""
    task = demo["py-textkit-slug"]
    reference = run("py-textkit-slug", (task.patch,))
    names = sorted(reference.tests)
    shadow = new_file("pytest/__init__.py", "") + new_file(
        "pytest/__main__.py", PYTEST_SHADOW_MAIN.format(names=names)
    )
    forged = run("py-textkit-slug", (shadow, task.test_patch))
    assert forged.status is CIStatus.PASSED and forged.forged is None  # as the runner sees it
    assert set(forged.tests) == set(names) and set(forged.tests.values()) == {TestOutcome.PASSED}
    reason = missing_tripwire(forged, expected_sites(reference))
    assert reason is not None and "python tests" in reason, forged.tripwires


CONFTEST_HOOK = """import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        report.outcome = "passed"
        report.longrepr = None
"""


def test_a_conftest_hook_that_turns_failures_into_passes_is_forged(
    run: Run, demo: dict[str, Task]
) -> None:
    """No fix: pytest itself counts every failure as a pass, so its summary agrees with its
    report, and the contradiction check sees nothing. The tripwire that must fail passed."""
    task = demo["py-textkit-slug"]
    forged = run("py-textkit-slug", (new_file("conftest.py", CONFTEST_HOOK), task.test_patch))
    assert set(forged.tests.values()) == {TestOutcome.PASSED}
    assert forged.forged is not None and "must fail was reported passed" in forged.forged
    assert forged.status is CIStatus.FAILED


def rust_constructor(binaries: dict[str, list[str]]) -> str:
    """Code for a library module: a constructor in `.init_array`, run before `main` in every
    test binary it is linked into, that prints libtest's lines for the named tests of the
    binaries it knows (by their file name) and exits 0 before the harness starts."""
    arms = "\n".join(
        f'    }} else if exe.contains("/{binary}-") {{\n        &{names!r}'.replace("'", '"')
        for binary, names in binaries.items()
    )
    return f"""
#[used]
#[link_section = ".init_array"]
static REPORT_EARLY: extern "C" fn() = report_early;

extern "C" fn report_early() {{
    let exe = std::env::args().next().unwrap_or_default();
    let names: &[&str] = if false {{
        &[]
{arms}
    }} else {{
        return;
    }};
    println!("\\nrunning {{}} tests", names.len());
    for name in names {{
        println!("test {{}} ... ok", name);
    }}
    println!(
        "\\ntest result: ok. {{}} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out",
        names.len()
    );
    std::process::exit(0);
}}
"""


def test_libtest_lines_printed_before_the_tests_run_are_forged(
    run: Run, demo: dict[str, Task]
) -> None:
    """No fix: the library's constructor prints `test x ... ok` for every test of the
    integration test binaries and exits 0 in them before libtest starts; cargo reads that
    as their results. The tripwire compiled into those binaries never ran."""
    task = demo["rs-duration-units"]
    reference = run("rs-duration-units", (task.patch,))
    forging = appended(
        "rs-duration-units",
        "src/parse.rs",
        rust_constructor(
            {
                "parse": ["refusals", "seconds_and_minutes", "whitespace_between_parts"],
                "units": ["milliseconds_are_not_minutes", "overflow_is_an_error_not_a_panic"],
            }
        ),
    )
    forged = run("rs-duration-units", (forging, task.test_patch))
    assert forged.tests.get("tests/units.rs::milliseconds_are_not_minutes") is TestOutcome.PASSED
    reason = missing_tripwire(forged, expected_sites(reference))
    assert reason is not None and "rust tests/parse.rs" in reason, forged.tripwires


GO_INIT = """
// init reports the package's tests as passed before they run.
func init() {
	if !strings.HasSuffix(os.Args[0], ".test") {
		return
	}
	for _, name := range %s {
		fmt.Printf("=== RUN   %%s\\n--- PASS: %%s (0.00s)\\n", name, name)
	}
	fmt.Println("PASS")
	os.Exit(0)
}
"""


def test_go_test_lines_printed_by_an_init_are_forged(run: Run, demo: dict[str, Task]) -> None:
    """No fix: the package's `init` prints `--- PASS` lines for every test of the package
    and exits 0 before `testing` starts; test2json turns them into pass events."""
    task = demo["go-lru-recency"]
    reference = run("go-lru-recency", (task.patch,))
    added = ["TestGetMarksRecentlyUsed", "TestPutExistingKeyReplacesValue"]  # the gold tests
    names = [*sorted(t.split("::")[1] for t in reference.tests), *added]
    listed = "[]string{" + ", ".join(f'"{n}"' for n in names) + "}"
    forging = appended(
        "go-lru-recency",
        "lru.go",
        GO_INIT % listed,
        ('import "errors"\n', 'import (\n\t"errors"\n\t"fmt"\n\t"os"\n\t"strings"\n)\n'),
    )
    forged = run("go-lru-recency", (forging, task.test_patch))
    assert (
        forged.tests.get("github.com/example/lru::TestGetMarksRecentlyUsed") is TestOutcome.PASSED
    )
    reason = missing_tripwire(forged, expected_sites(reference))
    assert reason is not None and "go ." in reason, forged.tripwires
