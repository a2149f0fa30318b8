"""What a language's report rule gives back (`LanguageProfile.report_rule`), and the pieces
the rules share; `ci_runner.workflows.reporting` applies the rules."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ci_runner.pipeline import ReportFormat, ReportSpec, Step


@dataclass(frozen=True)
class Reporting:
    """How the pipeline's tests are read: the report, what the pipeline's env gets (the values
    of `appended` keys, options such as PYTEST_ADDOPTS, go after the job's own rather than
    replace them), and the CI steps as they must now run."""

    report: ReportSpec
    env: dict[str, str]
    steps: list[Step]
    appended: tuple[str, ...] = ()


def step_report(
    runner_words: re.Pattern[str],
    report_format: ReportFormat,
    steps: list[Step],
    runners: dict[str, str],
    env: dict[str, str],
    appended: tuple[str, ...] = (),
) -> Reporting:
    """The report read from the log of the last test step: of the last one whose runner is
    the language's own (`runner_words`), when there is one (not a helper's)."""
    testing = [s for s in steps if s.name in runners] or steps
    own = [s for s in testing if runner_words.search(runners.get(s.name, ""))]
    testing = own or testing
    report = ReportSpec(format=report_format, step=testing[-1].name)
    return Reporting(report, env, steps, appended)


def with_appended(step: Step, key: str, value: str) -> Step:
    """A step whose own env sets `key` keeps its value, with `value` after it."""
    if key not in step.env:
        return step
    return step.model_copy(update={"env": {**step.env, key: f"{step.env[key]} {value}"}})
