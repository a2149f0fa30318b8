"""Java's plug-in on its own: the commands it recognises, Surefire's totals, its tripwire
classes in the JUnit the module uses, and when one may fail."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ci_runner.languages import profile_of
from ci_runner.languages.java import REPORTS, requested_version
from ci_runner.languages.java.results import surefire_summary
from ci_runner.languages.java.tripwires import plant
from ci_runner.pipeline import Pipeline, ReportFormat, Step
from ci_runner.reports import runner_summary
from ci_runner.workflows.commands import runs_tests
from ci_runner.workflows.reporting import report_for

JAVA = profile_of("java")
JUPITER_POM = (
    "<project><dependencies><dependency><groupId>org.junit.jupiter</groupId>"
    "<artifactId>junit-jupiter</artifactId></dependency></dependencies></project>"
)
JUNIT4_POM = (
    "<project><dependencies><dependency><groupId>junit</groupId>"
    "<artifactId>junit</artifactId></dependency></dependencies></project>"
)


@pytest.mark.parametrize(
    ("line", "runs"),
    [
        ("mvn -B test", True),
        ("./mvnw --batch-mode --no-transfer-progress verify", True),
        ("mvn -B -pl core -am install", True),
        ("mvn -B package -DskipTests", False),
        ("./gradlew test", True),
        ("mvn -B dependency:go-offline", False),
        ("mvn -v", False),
    ],
)
def test_the_maven_and_gradle_lines_that_run_tests(line: str, runs: bool) -> None:
    assert runs_tests(line) is runs


def test_surefire_files_are_the_report_wherever_maven_starts() -> None:
    steps = [Step(name="test", run="./ci/build.sh")]
    reporting = report_for("java", steps, {"test": "mvn"}, [])
    assert reporting.report.format is ReportFormat.JUNIT and reporting.report.path == REPORTS


def test_surefire_totals_count_and_per_class_lines_do_not() -> None:
    log = (
        "[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.04 s "
        "<<< FAILURE! -- in demo.CalcTest\n"
        "[INFO] Tests run: 2, Failures: 0, Errors: 0, Skipped: 1, Time elapsed: 0.01 s "
        "-- in demo.OtherTest\n"
        "[INFO] \n[INFO] Results:\n"
        "[ERROR] Tests run: 5, Failures: 1, Errors: 1, Skipped: 1\n"
    )
    assert surefire_summary("[ERROR] Tests run: 5, Failures: 1, Errors: 1, Skipped: 1") == {
        "failed": 2,
        "passed": 2,
    }
    summary = runner_summary([(log, False)])
    assert summary is not None and summary.failed == 2 and summary.passed == 2
    assert "maven surefire" in summary.runners


def test_the_release_a_pom_compiles_for_is_the_request() -> None:
    pom = "<properties><maven.compiler.source>1.8</maven.compiler.source></properties>"
    request = requested_version({"pom.xml": pom})
    assert request is not None and request.version == "8"
    assert requested_version({"pom.xml": "<project/>"}) is None


def _module(root: Path, folder: str, pom: str, tests: bool = True) -> None:
    (root / folder).mkdir(parents=True, exist_ok=True)
    (root / folder / "pom.xml").write_text(pom)
    (root / folder / "src/main/java/demo").mkdir(parents=True)
    (root / folder / "src/main/java/demo/Calc.java").write_text("class Calc {}\n")
    if tests:
        (root / folder / "src/test/java/demo").mkdir(parents=True)


def test_a_tripwire_class_goes_into_each_reached_module_in_its_junit(tmp_path: Path) -> None:
    _module(tmp_path, ".", "<project><modules><module>a</module></modules></project>", False)
    _module(tmp_path, "a", JUPITER_POM)
    _module(tmp_path, "b", JUNIT4_POM)
    _module(tmp_path, "c", "<project/>")  # neither JUnit: none
    # beside the module's first test, in its package (Error Prone refuses no package)
    (tmp_path / "a/src/test/java/demo/zz").mkdir()
    (tmp_path / "a/src/test/java/demo/zz/LaterTest.java").write_text("package demo.zz;\n")
    (tmp_path / "a/src/test/java/demo/CalcTest.java").write_text("package demo;\n")
    touched = frozenset(
        {"a/src/main/java/demo/Calc.java", "b/src/main/java/demo/Calc.java", "c/x.java"}
    )
    sites = plant(tmp_path, touched, True)
    assert [s.label for s in sites] == ["java a", "java b"]
    (a_path, a_source), (b_path, b_source) = (next(iter(s.files.items())) for s in sites)
    assert a_path.startswith("a/src/test/java/demo/") and a_path.endswith("Test.java")
    assert a_source.startswith(b"package demo;\n")
    assert b_path.startswith("b/src/test/java/") and b_path.count("/") == 4  # no test yet
    assert not b_source.startswith(b"package")
    assert b"org.junit.jupiter.api.Test" in a_source and b"org.junit.Test;" in b_source
    for site, source in ((sites[0], a_source), (sites[1], b_source)):
        assert site.failing is not None
        assert f"public void {site.passing}()".encode() in source
        assert f"public void {site.failing}()".encode() in source
        assert re.search(rb"public class (\w+Test) \{", source)[1].decode() == site.names[0]  # type: ignore[index]
    assert not plant(tmp_path, touched, False)[0].failing


def test_a_must_fail_tripwire_only_where_maven_goes_on_past_a_failing_module(
    tmp_path: Path,
) -> None:
    form = JAVA.tripwires
    assert form is not None
    pipeline = Pipeline.model_validate(
        {
            "steps": [{"name": "t", "run": "mvn -B test"}],
            "report": {"format": "junit", "path": REPORTS},
        }
    )
    last = form.runner.search("mvn -B test")
    assert last is not None
    (tmp_path / "pom.xml").write_text(JUPITER_POM)
    assert form.may_fail(tmp_path, pipeline, ["mvn -B test"], last)
    assert not form.may_fail(
        tmp_path, pipeline, ["mvn -B test -Dsurefire.skipAfterFailureCount=1"], last
    )
    (tmp_path / "pom.xml").write_text("<project><modules><module>a</module></modules></project>")
    assert not form.may_fail(tmp_path, pipeline, ["mvn -B test"], last)
    assert form.may_fail(tmp_path, pipeline, ["mvn -B -fae test"], last)


def test_a_maven_line_goes_on_past_a_failing_test_so_a_tripwire_may_fail(
    tmp_path: Path,
) -> None:
    """As cargo test gets --no-fail-fast: every module's tests run, and a must-fail tripwire
    may go in even where the build has many modules."""
    notes: list[str] = []
    steps = [
        Step(name="b", run="mvn --batch-mode verify && ./mvnw -q test"),
        Step(name="x", run="mvn -v"),
    ]
    reporting = report_for("java", steps, {"b": "mvn"}, notes)
    assert [s.run for s in reporting.steps] == [
        "mvn -Dmaven.test.failure.ignore=true --batch-mode verify && "
        "./mvnw -Dmaven.test.failure.ignore=true -q test",
        "mvn -v",
    ]
    again = report_for("java", reporting.steps, {"b": "mvn"}, [])
    assert again.steps == reporting.steps  # said once
    form = JAVA.tripwires
    assert form is not None
    (tmp_path / "pom.xml").write_text("<project><modules><module>a</module></modules></project>")
    pipeline = Pipeline.model_validate(
        {
            "steps": [s.model_dump() for s in reporting.steps],
            "report": reporting.report.model_dump(),
        }
    )
    last = form.runner.search(reporting.steps[0].run)
    assert last is not None
    assert form.may_fail(tmp_path, pipeline, [reporting.steps[0].run], last)
