"""Where a derived pipeline's test results are read from, per language, tests untouched.

Each language's rule is its profile's `report_rule` (`ci_runner.languages`); this module
dispatches to it and holds what the rules share. What they do:

pytest writes JUnit through `PYTEST_ADDOPTS` (tox passes it on); a `go test` in a step's own
text gets `-json`, and one hidden behind make, just or a script gets `-v` through `GOFLAGS`,
so that its `--- PASS:` lines reach the log; a `ctest` in a step's own text writes JUnit with
`--output-junit` (ctest 3.21 or later; Debian bookworm has 3.25); cargo's libtest lines are
read from the test step's log. Whenever the named report cannot be read (a wrapper hid it,
or an older ctest wrote none), the runner reads the test lines of every step's log instead
(`ci_runner.reports.console`: pytest's summary, `go test -v`, libtest, ctest, unittest -v).
A doctest, Catch2 or GoogleTest binary that ctest runs whole is split into its cases by the
runner after the steps (`ci_runner.reports.binaries`): nothing in the steps changes for it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ci_runner.languages import find_profile
from ci_runner.languages.reporting import Reporting
from ci_runner.pipeline import Step


class ReportRuleError(ValueError):
    """No report rule for the task's language."""


def report_for(
    language: str,
    steps: list[Step],
    runners: dict[str, str],
    notes: list[str],
    setup: Sequence[Step] = (),
    read_file: Callable[[str], str | None] = lambda _: None,
) -> Reporting:
    """How the derived pipeline's tests are read, by the language profile's report rule;
    `runners` maps a step to its test runner, `setup` is what the environment build runs (it
    may pin the tools)."""
    profile = find_profile(language)
    if profile is None:
        raise ReportRuleError(f"no report rule for language {language!r}")
    return profile.report_rule(steps, runners, notes, setup, read_file)
