"""Java with Maven: Debian's default JDK and Maven, Surefire's JUnit files per test class.

Maven resolves what a build needs from Maven Central when it runs, so an environment build
runs the CI steps once with the network (the build's CA in a truststore of its own, never in
the image), into a local repository in the cache, and then tells Maven it is offline
(`settings.xml` there): every CI run resolves from that repository alone. The Maven wrapper
keeps its Maven there too. Gradle cannot be fetched here (its distributions are not on Maven
Central), so a Gradle-only project's runs fail saying why.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from ci_runner.env_layout import CACHE_DIR, SYSTEM_PATH
from ci_runner.languages.java import results
from ci_runner.languages.java import tripwires as tripwires
from ci_runner.languages.profile import (
    COMMAND_END,
    COMMAND_START,
    CommandWords,
    LanguageProfile,
    ReadFile,
    TripwireForm,
)
from ci_runner.languages.reporting import Reporting
from ci_runner.languages.sites import Site
from ci_runner.languages.toolchain import (
    ToolchainChoice,
    ToolchainRequest,
    from_suites,
    never,
    no_relaxations,
    request_as_asked,
)
from ci_runner.pipeline import Pipeline, ReportFormat, ReportSpec, Step

SUITE_VERSIONS = {"bookworm": "17", "trixie": "21"}  # default-jdk
MAVEN_HOME = f"{CACHE_DIR}/maven"  # Maven's user.home: its settings and local repository
# Surefire writes TEST-<class>.xml into each module's target/surefire-reports
REPORTS = "*target/surefire-reports/TEST-*.xml"

_MAVEN = r"(?:\./)?mvnw?(?:\.cmd)?"
_GRADLE = r"(?:\./)?gradlew?(?:\.bat)?"
# a Maven phase that runs the tests (every one from `test` on), or Gradle's test tasks
_RUNS_TESTS = (
    rf"{_MAVEN}\s+(?:[^\s;&|]+\s+){{0,16}}?(?:test|integration-test|verify|install|deploy|package)",
    rf"{_GRADLE}\s+(?:[^\s;&|]+\s+){{0,16}}?(?:test|check|build)",
)
_RUNNER = re.compile(COMMAND_START + rf"(?:{_MAVEN}|{_GRADLE})" + COMMAND_END)
_RUNNER_WORDS = re.compile(r"\bmvnw?\b|\bgradlew?\b")
# options after which a failing test no longer ends the build where it failed: Maven stops
# at the first module with one, so only a build of one module, or one told to go on, lets a
# must-fail tripwire in beside the tests
_GOES_ON = re.compile(
    r"(?:^|\s)(?:-fae|--fail-at-end|-fn|--fail-never)(?=\s|$)|test\.failure\.ignore=true"
)
IGNORE_FAILURES = "-Dmaven.test.failure.ignore=true"
_IGNORES_FAILURES = re.compile(r"maven\.test\.failure\.ignore")
# a Maven command in a step's own text, up to its name
_VISIBLE_MAVEN = re.compile(r"(?:^|(?<=[\s;&|(]))(?:\./)?mvnw?(?=[ \t])", re.MULTILINE)
_STOPS = re.compile(r"skipAfterFailureCount|(?:^|\s)(?:-ff|--fail-fast)(?=\s|$)")
_MODULES = re.compile(r"<modules>\s*<module>")
_RELEASE = re.compile(
    r"<(?:maven\.compiler\.release|maven\.compiler\.source|java\.version|release|source)>"
    r"\s*(?:1\.)?(\d{1,2})\s*<"
)
# the JVM's trust for the build's fetches, from the build's CA bundle (SSL_CERT_FILE there):
# Java reads no PEM bundle, so a PKCS12 store beside the bundle, in the build's scratch
_TRUST = r"""import java.io.*;
import java.security.KeyStore;
import java.security.cert.*;

public class ArenaTrust {
    public static void main(String[] args) throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, "changeit".toCharArray());
        int i = 0;
        try (InputStream in = new FileInputStream(args[0])) {
            for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                store.setCertificateEntry("ca-" + i++, c);
            }
        }
        try (OutputStream out = new FileOutputStream(args[1])) {
            store.store(out, "changeit".toCharArray());
        }
    }
}
"""
_PREPARE = f"""mkdir -p {MAVEN_HOME}/.m2
if [ -n "${{SSL_CERT_FILE:-}}" ] && [ -f "$SSL_CERT_FILE" ]; then
  trust="$(dirname "$SSL_CERT_FILE")/arena-java-trust.p12"
  cat > /tmp/ArenaTrust.java <<'JAVA'
{_TRUST}JAVA
  java /tmp/ArenaTrust.java "$SSL_CERT_FILE" "$trust"
  rm -f /tmp/ArenaTrust.java
  opts="-Djavax.net.ssl.trustStore=$trust -Djavax.net.ssl.trustStoreType=PKCS12"
  opts="$opts -Djavax.net.ssl.trustStorePassword=changeit"
  printf 'MAVEN_OPTS="$MAVEN_OPTS %s"\\n' "$opts" > /root/.mavenrc
fi"""
# after the online warm-up: Maven is offline from now on, and the build's trust is gone
_COLLECT = f"""printf '<settings><offline>true</offline></settings>\\n' \\
  > {MAVEN_HOME}/.m2/settings.xml
rm -f /root/.mavenrc"""


def requested_version(files: Mapping[str, str]) -> ToolchainRequest | None:
    """The Java release the root pom compiles for (`maven.compiler.release`, `.source`,
    `java.version`, the compiler plugin's `<release>`)."""
    found = _RELEASE.search(files.get("pom.xml", ""))
    return ToolchainRequest(found[1], "pom.xml") if found else None


def choose_toolchain(request: ToolchainRequest | None) -> ToolchainChoice:
    """The suite whose default JDK is the release asked for or the next newer (javac 17
    compiles for every release from 7 on)."""
    return from_suites("java", SUITE_VERSIONS, request)


def _every_test(step: Step, notes: list[str]) -> Step:
    """A Maven line in the step's own text goes on past a module with a failing test, as
    `cargo test` gets --no-fail-fast: every module's tests run, so a must-fail tripwire may
    go in beside them, and the run is still failed by its failing tests (read from the
    report, whatever Maven's exit code)."""
    if not _VISIBLE_MAVEN.search(step.run) or _IGNORES_FAILURES.search(step.run):
        return step
    notes.append(f"  step {step.name!r}: Maven goes on past a failing test ({IGNORE_FAILURES})")
    return step.model_copy(
        update={"run": _VISIBLE_MAVEN.sub(rf"\g<0> {IGNORE_FAILURES}", step.run)}
    )


def report_rule(
    steps: list[Step],
    runners: dict[str, str],
    notes: list[str],
    setup: Sequence[Step],
    read_file: ReadFile,
) -> Reporting:
    """Surefire's files, however Maven is started (a step's own line, a script, make)."""
    notes.append(f"  the tests are read from Surefire's JUnit files ({REPORTS})")
    steps = [_every_test(s, notes) if s.name in runners else s for s in steps]
    return Reporting(ReportSpec(format=ReportFormat.JUNIT, path=REPORTS), {}, steps)


def _may_fail(root: Path, pipeline: Pipeline, lines: list[str], last: re.Match[str]) -> bool:
    """A build of one module, or one told to go on past a module with a failing test; and
    no option that stops the tests at a failure."""
    texts = [*lines, *pipeline.env_values("MAVEN_OPTS"), *pipeline.env_values("MAVEN_ARGS")]
    if any(_STOPS.search(text) for text in texts):
        return False
    pom = tripwires.read_pom(root, root)
    if pom is None or "skipAfterFailureCount" in pom:
        return False
    return not _MODULES.search(pom) or any(_GOES_ON.search(text) for text in texts)


def _plant(root: Path, pipeline: Pipeline, touched: frozenset[str], failing: bool) -> list[Site]:
    return tripwires.plant(root, touched, failing)


COMMANDS = CommandWords(
    runs_tests=_RUNS_TESTS,
    selects_no_test=(
        r"\b(?:mvnw?|gradlew?)\b.*?(?:-DskipTests|-Dmaven\.test\.skip=true|-x\s+test)\b",
    ),
    installs=(rf"{_MAVEN}\s+(?:[^\s;&|]+\s+)*dependency:(?:go-offline|resolve)\b",),
    lints=(rf"{_MAVEN}\s+(?:[^\s;&|]+\s+)*(?:spotless:check|checkstyle:check)\b",),
)

# how a warm-up run says it could not set itself up (ci_runner.warmup)
SETUP_FAILURES = (
    (
        "Maven could not resolve a dependency",
        r"\[ERROR\] Failed to execute goal on project .*: Could not resolve dependencies",
    ),
    (
        "Maven could not resolve a plugin",
        r"\[ERROR\] Plugin \S+ or one of its dependencies could not be resolved",
    ),
    ("Maven is offline and lacks an artifact", r"has not been downloaded from it before"),
    ("Maven could not build the project model", r"\[ERROR\] +Non-resolvable (?:parent|import) POM"),
    (
        "Gradle could not fetch its distribution",
        r"Downloading https://services\.gradle\.org/distributions/",
    ),
    ("the JDK is too old", r"error: (?:invalid target release|release version \d+ not supported)"),
)

PROFILE = LanguageProfile(
    name="java",
    packages=("default-jdk-headless", "maven"),
    official_packages=(),
    official_repository="maven",
    suite_versions=SUITE_VERSIONS,
    request_files=("pom.xml",),
    requested_version=requested_version,
    choose_toolchain=choose_toolchain,
    settle_request=request_as_asked,
    official_version=lambda request: request.version,
    official_tag=lambda version: f"3-eclipse-temurin-{version}",
    official_lacks=never,
    relaxations=no_relaxations,
    runtime_env={
        "MAVEN_OPTS": f"-Duser.home={MAVEN_HOME}",
        "MAVEN_USER_HOME": f"{MAVEN_HOME}/.m2",  # the Maven wrapper's own home
        "PATH": SYSTEM_PATH,
    },
    offline_only=(),
    dependency_manifest="pom.xml",
    declares_dependencies=lambda text: "<dependency>" in text,
    runner_words=_RUNNER_WORDS,
    commands=COMMANDS,
    matrix_keys=("java-version", "java", "jdk"),
    report_rule=report_rule,
    setup_failures=SETUP_FAILURES,
    results=results.RESULTS,
    scope_rules=(),  # `-pl` and `-Dtest` select by module and class, not by file
    typical_image_mb=620,
    typical_env_layer_mb=150,
    prepare=_PREPARE,
    collect=_COLLECT,
    warm_online=True,
    tripwires=TripwireForm(
        runner=_RUNNER,
        report_format=ReportFormat.JUNIT,
        plant=_plant,
        may_fail=_may_fail,
    ),
)
