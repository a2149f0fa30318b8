"""What a run's report says of its tripwires, and when that makes the run forged.

- The tripwires' ids leave the results: they are never the gold tests', the reviewer's or
  anyone's, and the run's status is decided without them. What each site showed stays on
  the result (`CIResult.tripwires`), for the evidence and for the verdicts below.
- A tripwire that must fail and is reported passed was rewritten by the code under test:
  the run is forged, always (`tampered`).
- A tripwire that must pass and is missing is forged only where an honest run is known to
  report it (`missing_tripwire`): the reference run `base + gold` says which sites its report shows
  (`expected_sites`), and a site counts only when the run reports one of its other tests
  passed, so a build that breaks or a collection error (which report no pass there
  either) are never taken for forgery. A failure does not excuse a missing tripwire (a
  fabricated report could name one to be excused): a runner that an option the planner
  could not see (`-x` set from a conftest.py) stops after a failing test, in the same
  directory or package and before the tripwire, is the one honest run this misjudges.
- The last step's non-zero exit is the runner's own when the only failing tests of the run
  are the tripwires that must fail (`tripwire_exits`).

Scans are linear: each id is cut into its runs of lowercase letters and digits, looked up
in a table of the secret names' runs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ci_runner.languages.sites import TOKEN_CHARS, Site
from ci_runner.languages.twins import read_twins
from ci_runner.tripwires.apart import Apart, run_apart
from ci_runner.tripwires.plan import Planting, twin_forms
from ci_runner.types import CIResult, StepResult, TestOutcome, TripwireSite, TwinResult

_RUN = re.compile(rf"[a-z0-9]{{{TOKEN_CHARS - 1},}}")
_FAILING = (TestOutcome.FAILED, TestOutcome.ERROR)
_NAME, _PASSING, _FAILING_TEST = "name", "passing", "failing"


@dataclass(frozen=True)
class Found:
    """One id's tripwire: its site, and which of its tests it is (None: another id that
    names the site's module, such as a collection error of its file)."""

    site: int
    role: str


class TripwireIndex:
    """The secret names of a planting, to find its tripwires among a report's ids."""

    def __init__(self, planting: Planting) -> None:
        self._sites = planting.sites
        self._runs: dict[str, tuple[int, str]] = {}
        for number, site in enumerate(planting.sites):
            roles = [(n, _NAME) for n in site.names] + [(site.passing, _PASSING)]
            roles += [(site.failing, _FAILING_TEST)] if site.failing else []
            for name, role in roles:  # a test's own name comes last: it decides
                for run in _RUN.findall(name):
                    self._runs[run] = (number, role)

    def find(self, test_id: str) -> Found | None:
        if not self._runs:
            return None
        found: Found | None = None
        for run in _RUN.findall(test_id):
            if (hit := self._runs.get(run)) is not None:
                found = Found(*hit)
                if found.role != _NAME:
                    return found
        return found

    def site(self, number: int) -> Site:
        return self._sites[number]


def read_tripwires(
    planting: Planting, tests: Mapping[str, TestOutcome]
) -> tuple[dict[str, TestOutcome], tuple[TripwireSite, ...]]:
    """The results without the tripwires' ids, and what each site showed."""
    index = TripwireIndex(planting)
    kept: dict[str, TestOutcome] = {}
    passing: dict[int, TestOutcome] = {}
    failing: dict[int, TestOutcome] = {}
    prefixes: dict[int, str] = {}
    for test_id, outcome in tests.items():
        found = index.find(test_id)
        if found is None:
            kept[test_id] = outcome
            continue
        if found.role == _PASSING:
            passing[found.site] = outcome
        elif found.role == _FAILING_TEST:
            failing[found.site] = outcome
        if found.role != _NAME:
            prefixes.setdefault(found.site, index.site(found.site).prefix(test_id))
    seen = tuple(
        TripwireSite(
            site=site.label,
            prefix=prefixes.get(number),
            passing=passing.get(number),
            failing=failing.get(number),
            failing_planted=site.failing is not None,
        )
        for number, site in enumerate(planting.sites)
    )
    return kept, seen


def tampered(sites: tuple[TripwireSite, ...]) -> str | None:
    """Why the run is forged by its tripwires alone: one that must fail was reported passed."""
    passed = [s.site for s in sites if s.failing_planted and s.failing is TestOutcome.PASSED]
    if not passed:
        return None
    shown = ", ".join(passed[:5]) + (" ..." if len(passed) > 5 else "")
    return (
        f"the runner's tripwire test that must fail was reported passed ({shown}): the code "
        "under test rewrote the test results"
    )


def dropped(sites: tuple[TripwireSite, ...]) -> str | None:
    """Why the run is forged by a must-fail tripwire left out of its report while the must-
    pass one beside it, in the same file, is reported: a runner told never to stop at a
    failure (the invocation run apart) reports both or neither."""
    gone = [s.site for s in sites if s.failing_planted and s.failing is None and s.passing]
    if not gone:
        return None
    shown = ", ".join(gone[:5]) + (" ..." if len(gone) > 5 else "")
    return (
        f"the runner's tripwire test that must fail is missing from the report of its own run "
        f"while the one beside it is reported ({shown}): the code under test rewrote the results"
    )


def read_apart(
    apart: Apart | None, tests: Mapping[str, TestOutcome] | None
) -> tuple[dict[str, TestOutcome], tuple[TwinResult, ...], tuple[TripwireSite, ...]]:
    """The other tests, the twins and the tripwire sites the invocation run apart reports
    (nothing when it was not due: `tests` None)."""
    if apart is None or tests is None:
        return {}, (), ()
    kept, twins = read_twins(twin_forms(), apart.twins, tests)
    others, seen = read_tripwires(Planting(sites=apart.sites), kept)
    return others, twins, seen


def decided_apart(
    tests: Mapping[str, TestOutcome], apart: Mapping[str, TestOutcome]
) -> dict[str, TestOutcome]:
    """The run's results, a test the invocation run apart reports too (the originals of its
    twins, in their files) taking its outcome from there: that invocation carries the
    must-fail tripwires and the twins, the run's own carries none, so code that tells the
    two apart could rewrite the run's own results unseen."""
    return {t: apart.get(t, o) for t, o in tests.items()}


def tripwire_exits(
    steps: tuple[StepResult, ...],
    tests: Mapping[str, TestOutcome],
    planting: Planting,
    twins: tuple[TwinResult, ...] = (),
) -> tuple[StepResult, ...]:
    """The steps, the last one marked `tripwire_exit` when its non-zero exit is the failing
    tripwires' doing: it ran to its end, and the run's only failing tests are those (the
    must-fail tripwires, and the twins: `tests` without their ids, `twins` as read)."""
    if not steps or not (planting.twins or any(site.failing for site in planting.sites)):
        return steps
    last = steps[-1]
    ended_by_itself = (
        last.exit_code not in (None, 0)
        and not (last.skipped or last.timed_out or last.sandbox_died or last.oom_killed)
        and last.stopped_by is None
    )
    if not ended_by_itself:
        return steps
    index = TripwireIndex(planting)
    failing = [t for t, o in tests.items() if o in _FAILING]
    twins_failing = any(r.twin_outcome in _FAILING for r in twins)
    roles = [index.find(t) for t in failing]
    if not (failing or twins_failing) or any(r is None or r.role != _FAILING_TEST for r in roles):
        return steps
    return (*steps[:-1], last.model_copy(update={"tripwire_exit": True}))


def expected_sites(reference: CIResult) -> dict[str, str]:
    """The sites whose tripwire that must pass an honest run reports passed, each with how
    its report spells the ids of the site's tests."""
    return {
        s.site: s.prefix
        for s in reference.tripwires
        if s.passing is TestOutcome.PASSED and s.prefix is not None
    }


def missing_tripwire(result: CIResult, expected: Mapping[str, str]) -> str | None:
    """Why the run is forged by a missing tripwire, or None: a site an honest run reports
    (`expected`) was planted, the run reports tests of it passed, and not its tripwire. A
    site of the invocation run apart holds no test of the run: any of the run's tests
    passed stands in (code that ends or hangs that invocation once its own results are
    rewritten leaves its must-pass tripwire out, as a build that breaks never does)."""
    planted = {s.site: s for s in result.tripwires}
    gone = []
    for label, prefix in expected.items():
        site = planted.get(label)
        if site is None or site.passing is not None:
            continue
        beside = "" if run_apart(label) else prefix
        passed = sum(
            1 for t, o in result.tests.items() if o is TestOutcome.PASSED and t.startswith(beside)
        )
        if passed:
            gone.append(f"{label} ({passed} of its tests reported passed)")
    if not gone:
        return None
    shown = "; ".join(gone[:5]) + (" ..." if len(gone) > 5 else "")
    return (
        f"the runner's tripwire test that must pass is missing from the report: {shown}; the "
        "results did not come from the test runner"
    )
