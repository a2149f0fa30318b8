"""The CI language registry: one complete profile per language, and no branch on a language
outside the profiles."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ci_runner.environments import fetches_dependencies
from ci_runner.languages import (
    LANGUAGES,
    LanguageProfile,
    UnknownLanguage,
    find_profile,
    profile_of,
    profiles,
)
from ci_runner.languages.toolchain import DEFAULT_SUITE, ToolchainRequest
from ci_runner.pipeline import ReportFormat, Step
from ci_runner.toolchains import SUITES
from ci_runner.workflows.reporting import report_for

ROOT = Path(__file__).resolve().parents[3]
PROFILE_DIR = "ci_runner/languages/"

# a test command of each language, as a workflow step would run it
TEST_COMMANDS = {
    "python": "python -m pytest tests",
    "go": "go test ./...",
    "rust": "cargo test --workspace",
    "cpp": "ctest --test-dir build",
    "java": "mvn -B test",
}


@pytest.fixture(params=LANGUAGES)
def profile(request: pytest.FixtureRequest) -> LanguageProfile:
    return profile_of(request.param)


def test_every_registered_name_loads_the_profile_of_that_name() -> None:
    assert [p.name for p in profiles()] == list(LANGUAGES)
    assert all(find_profile(name) is profile_of(name) for name in LANGUAGES)


def test_an_unregistered_language_is_refused_naming_the_known_ones() -> None:
    assert find_profile("cobol") is None
    with pytest.raises(UnknownLanguage, match="unknown language 'cobol'; known: python, go"):
        profile_of("cobol")


def test_a_profile_gives_an_image_and_a_toolchain_on_every_suite(
    profile: LanguageProfile,
) -> None:
    assert profile.packages and profile.official_repository
    assert set(profile.official_packages) <= set(profile.packages)
    assert set(profile.suite_versions) == set(SUITES)
    plain = profile.choose_toolchain(None)
    assert (plain.suite, plain.version) == (DEFAULT_SUITE, profile.suite_versions[DEFAULT_SUITE])
    assert profile.requested_version({}) is None  # a repo without files asks for nothing
    settled, notes = profile.settle_request(None, None, {})
    # a job naming no Rust ran on the runner's stable one; the others ask for nothing
    assert settled == (
        ToolchainRequest("stable", "the runner's own Rust (the job names none)")
        if profile.name == "rust"
        else None
    )
    assert notes == ()
    assert profile.official_tag(profile.official_version(ToolchainRequest("1.2", "x")))


def test_a_profile_gives_an_offline_environment(profile: LanguageProfile) -> None:
    assert "PATH" in profile.runtime_env
    assert profile.typical_image_mb > 0 and profile.typical_env_layer_mb > 0
    assert set(profile.offline_only) <= set(profile.runtime_env)
    assert profile.warm_online or profile.warm_build_cache
    if profile.dependency_manifest is None:
        assert not profile.declares_dependencies("")
    else:  # what the build fetches for it is kept for the offline runs
        assert profile.collect is not None


def test_a_profile_reports_a_test_step_of_its_own_runner(profile: LanguageProfile) -> None:
    command = TEST_COMMANDS[profile.name]
    assert profile.runner_words.search(command)
    others = [p for p in profiles() if p is not profile]
    assert not any(p.runner_words.search(command) for p in others)
    steps = [Step(name="test", run=command)]
    reporting = report_for(profile.name, steps, {"test": command}, [])
    assert reporting.report.format in ReportFormat
    assert reporting.report.step == "test" or reporting.report.path is not None


def test_a_tripwire_form_plants_where_its_own_runner_and_report_are(
    profile: LanguageProfile,
) -> None:
    form = profile.tripwires
    if form is None:  # C++ only: see ci_runner.tripwires.plan
        assert profile.name == "cpp"
        return
    assert form.runner.search(TEST_COMMANDS[profile.name])
    steps = [Step(name="test", run=TEST_COMMANDS[profile.name])]
    assert report_for(profile.name, steps, {}, []).report.format is form.report_format


def _language_branches(path: Path) -> list[str]:
    """`language == "go"`-like comparisons and `Language("go")`-like references in a file."""
    relative = path.relative_to(ROOT).as_posix()
    found = []
    for node in ast.walk(ast.parse(path.read_text(), relative)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            named = any(
                isinstance(s, ast.Name | ast.Attribute)
                and (s.id if isinstance(s, ast.Name) else s.attr).endswith("language")
                for s in sides
            )
            words = [s.value for s in sides if isinstance(s, ast.Constant)]
            if named and any(w in LANGUAGES for w in words):
                found.append(f"{relative}:{node.lineno}")
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "Language"
        ):
            found.append(f"{relative}:{node.lineno}")
    return found


def test_no_layer_branches_on_a_language_outside_the_profiles() -> None:
    files = [
        path
        for package in ("ci_runner", "arena/tasks", "arena/ownership", "api")
        for path in sorted((ROOT / package).rglob("*.py"))
        if not path.relative_to(ROOT).as_posix().startswith(PROFILE_DIR)
        and "/demo/" not in path.as_posix()
    ]
    assert [line for path in files for line in _language_branches(path)] == []


@pytest.mark.parametrize(
    ("manifest", "declares"),
    [
        ('[package]\nname = "a"\n\n[dependencies]\nitoa = "1"\n', True),
        ('[workspace]\nmembers = ["crates/a"]\n\n[workspace.dependencies]\nitoa = "1"\n', True),
        # resvg's root: the members' manifests hold the dependencies, which the build fetches
        ('[workspace]\nmembers = ["crates/resvg", "crates/usvg"]\nresolver = "2"\n', True),
        ('[package]\nname = "a"\nversion = "0.1.0"\n', False),
    ],
)
def test_a_rust_workspace_root_counts_as_declaring_dependencies(
    manifest: str, declares: bool
) -> None:
    assert fetches_dependencies("rust", {"Cargo.toml": manifest}.get) is declares
