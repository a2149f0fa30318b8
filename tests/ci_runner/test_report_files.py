"""A report pattern reads every file it matches: a build writes one JUnit file per test class
and module (Surefire's `*/target/surefire-reports/TEST-*.xml`)."""

from __future__ import annotations

from ci_runner import CIRequest, CIRunner, Pipeline
from ci_runner.types import TestOutcome
from tests.conftest import MakeRepo


def _suite(classname: str, *cases: tuple[str, bool]) -> str:
    body = "".join(
        f'<testcase classname="{classname}" name="{name}">'
        + ("" if passed else '<failure message="no"/>')
        + "</testcase>"
        for name, passed in cases
    )
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="{classname}">{body}</testsuite>'
    )


WRITES = "\n".join(
    (
        "mkdir -p a/target/surefire-reports b/c/target/surefire-reports elsewhere",
        f"echo '{_suite('demo.ATest', ('adds', True), ('subtracts', False))}'"
        " > a/target/surefire-reports/TEST-demo.ATest.xml",
        f"echo '{_suite('demo.BTest$Inner', ('divides', True))}'"
        " > 'b/c/target/surefire-reports/TEST-demo.BTest$Inner.xml'",
        # the same test again, failed: the worst outcome stands
        f"echo '{_suite('demo.ATest', ('adds', False))}'"
        " > a/target/surefire-reports/TEST-demo.ATest-again.xml",
        f"echo '{_suite('demo.Decoy', ('never', True))}' > elsewhere/TEST-demo.Decoy.xml",
    )
)
PATTERN = "*/target/surefire-reports/TEST-*.xml"


def _pipeline(script: str) -> Pipeline:
    return Pipeline.model_validate(
        {
            "steps": [{"name": "test", "run": script}],
            "report": {"format": "junit", "path": PATTERN},
        }
    )


def test_every_file_a_pattern_matches_is_read_and_no_other(
    runner: CIRunner, make_repo: MakeRepo, images: dict[str, str]
) -> None:
    repo, commit = make_repo({"README": "x\n"})
    result = runner.run(
        CIRequest(repo=repo, commit=commit, pipeline=_pipeline(WRITES), image=images["python"])
    )
    assert result.error == "failing tests: demo.ATest::adds, demo.ATest::subtracts"
    assert result.tests == {
        "demo.ATest::adds": TestOutcome.FAILED,
        "demo.ATest::subtracts": TestOutcome.FAILED,
        "demo.BTest$Inner::divides": TestOutcome.PASSED,
    }


def test_a_pattern_matching_no_file_says_so(
    runner: CIRunner, make_repo: MakeRepo, images: dict[str, str]
) -> None:
    repo, commit = make_repo({"README": "x\n"})
    result = runner.run(
        CIRequest(repo=repo, commit=commit, pipeline=_pipeline("true"), image=images["python"])
    )
    assert result.tests == {}
    assert result.error is not None and f"no test report matches {PATTERN}" in result.error
