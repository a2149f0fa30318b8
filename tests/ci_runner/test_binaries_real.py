"""One test binary per framework registered once with ctest, in a real container: its cases
are the ids, so a reviewer's new case is a new id that fails on base and passes with the fix.

The project is built from its GitHub workflow as a task's is: Debian's GoogleTest, doctest and
Catch2 are installed by the workflow's `sudo apt-get` step when the environment image is
built, and every CI run is offline.
"""

from __future__ import annotations

import difflib

import docker
import pytest

from arena.ci import TaskCI
from arena.match import Arena
from arena.ownership import owned_test_ids
from arena.players.baselines import OraclePlayer
from arena.protocol import Winner, judge_tests, twin_check
from arena.tasks.schema import Language, Task
from ci_runner import CIRequest, CIResult, CIRunner, CISettings, CIStatus
from ci_runner.environments import EnvironmentBuilder, EnvironmentSpec
from ci_runner.providers.docker.provider import DockerProvider
from ci_runner.types import TestOutcome as T
from ci_runner.workflows import derive_pipeline
from ci_runner.workspace import Workspaces
from tests.arena.test_gaming_rounds import RawText, fenced, judged_without_twins
from tests.conftest import MakeRepo

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("no_containers_left")]

WORKFLOW = """
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: sudo apt-get update && sudo apt-get install -y libgtest-dev doctest-dev catch2
      - run: cmake -S . -B build
      - run: cmake --build build -j2
      - run: cd build && ctest --output-on-failure
"""

FILES = {
    ".github/workflows/ci.yml": WORKFLOW,
    "CMakeLists.txt": """cmake_minimum_required(VERSION 3.16)
project(calc CXX)
set(CMAKE_CXX_STANDARD 17)
enable_testing()
find_package(GTest REQUIRED)
find_package(doctest REQUIRED)
find_package(Catch2 REQUIRED)
add_library(calc calc.cpp)
target_include_directories(calc PUBLIC .)
add_executable(gtests tests/gtests.cpp)
target_link_libraries(gtests calc GTest::gtest_main)
add_test(NAME gtests COMMAND gtests)
add_executable(dtests tests/doctest_main.cpp tests/dtests.cpp)
target_link_libraries(dtests calc doctest::doctest)
add_test(NAME dtests COMMAND dtests)
add_executable(catch_tests tests/catch_main.cpp tests/catch_tests.cpp)
target_link_libraries(catch_tests calc Catch2::Catch2)
add_test(NAME catch_tests COMMAND catch_tests)
""",
    "calc.hpp": "#pragma once\nint add(int a, int b);\nint neg(int a);\n",
    "calc.cpp": (
        '#include "calc.hpp"\n\nint add(int a, int b) {\n    return a + b;\n}\n\n'
        "int neg(int a) {\n    return a < 0 ? -a : a;\n}\n"
    ),
    "tests/gtests.cpp": """#include <gtest/gtest.h>
#include "calc.hpp"

TEST(Calc, Adds) {
    EXPECT_EQ(add(2, 3), 5);
}

template <typename T> class Typed : public ::testing::Test {};
using Types = ::testing::Types<int, long>;
TYPED_TEST_SUITE(Typed, Types);

TYPED_TEST(Typed, NegatesZero) {
    EXPECT_EQ(neg(TypeParam(0)), 0);
}
""",
    "tests/doctest_main.cpp": (
        "#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN\n#include <doctest/doctest.h>\n"
    ),
    "tests/dtests.cpp": """#include <doctest/doctest.h>
#include "calc.hpp"

TEST_CASE("adds small numbers") {
    CHECK(add(1, 2) == 3);
}

TEST_SUITE("signs") {
    TEST_CASE("negates zero") {
        CHECK(neg(0) == 0);
    }
}
""",
    "tests/catch_main.cpp": "#define CATCH_CONFIG_MAIN\n#include <catch2/catch.hpp>\n",
    "tests/catch_tests.cpp": """#include <catch2/catch.hpp>
#include "calc.hpp"

TEST_CASE("adds", "[calc]") {
    REQUIRE(add(2, 2) == 4);
}
""",
}

BASE_IDS = {
    "gtests::Calc.Adds",
    "gtests::Typed/0.NegatesZero",
    "gtests::Typed/1.NegatesZero",
    "dtests::adds small numbers",
    "dtests::negates zero",
    "catch_tests::adds",
}
NEW_IDS = {"gtests::Calc.Negates", "dtests::negates positives", "catch_tests::negates"}


def unified(path: str, before: str, after: str) -> str:
    body = "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            f"a/{path}",
            f"b/{path}",
        )
    )
    return f"diff --git a/{path} b/{path}\n{body}"


def edited(path: str, old: str, new: str) -> str:
    assert old in FILES[path]
    return unified(path, FILES[path], FILES[path].replace(old, new))


GOLD = edited("calc.cpp", "return a < 0 ? -a : a;", "return -a;")
# the reviewer's tests: one new case in each binary, each failing without the fix
REVIEW = (
    edited(
        "tests/gtests.cpp",
        "template <typename T>",
        "TEST(Calc, Negates) {\n    EXPECT_EQ(neg(3), -3);\n}\n\ntemplate <typename T>",
    )
    + edited(
        "tests/dtests.cpp",
        '    TEST_CASE("negates zero")',
        '    TEST_CASE("negates positives") {\n        CHECK(neg(2) == -2);\n    }\n\n'
        '    TEST_CASE("negates zero")',
    )
    + edited(
        "tests/catch_tests.cpp",
        "REQUIRE(add(2, 2) == 4);\n}\n",
        'REQUIRE(add(2, 2) == 4);\n}\n\nTEST_CASE("negates", "[calc]") {\n'
        "    REQUIRE(neg(5) == -5);\n}\n",
    )
)


def test_each_binary_registered_once_is_split_into_its_cases_and_a_new_case_is_the_reviewers(
    environments: EnvironmentBuilder,
    docker_client: docker.DockerClient,
    env_settings: CISettings,
    make_repo: MakeRepo,
) -> None:
    repo, commit = make_repo(FILES)
    derived = derive_pipeline({"ci.yml": WORKFLOW}, ["test"], "cpp")
    pipeline = derived.pipeline
    image = environments.ensure(
        EnvironmentSpec(repo=repo, commit=commit, language="cpp", pipeline=pipeline)
    )
    runner = CIRunner(env_settings, DockerProvider(env_settings, docker_client))

    def run(*diffs: str) -> CIResult:
        request = CIRequest(repo=repo, commit=commit, pipeline=pipeline, image=image, diffs=diffs)
        return runner.run(request)

    reference = run(GOLD)
    assert reference.status is CIStatus.PASSED, (reference.error, reference.steps[-1].log[-2000:])
    assert reference.tests == dict.fromkeys(BASE_IDS, T.PASSED)  # no binary-level id is left
    assert reference.forged is None

    on_base = run(REVIEW)
    assert on_base.status is CIStatus.FAILED and on_base.forged is None, on_base.error
    assert on_base.tests == {
        **dict.fromkeys(BASE_IDS, T.PASSED),
        **dict.fromkeys(NEW_IDS, T.FAILED),
    }

    on_gold = run(GOLD, REVIEW)
    assert on_gold.status is CIStatus.PASSED, on_gold.error
    assert on_gold.tests == dict.fromkeys(BASE_IDS | NEW_IDS, T.PASSED)

    valid, own = judge_tests(REVIEW, on_base, on_gold, reference, FILES.get)
    assert valid.holds, valid.reason
    assert own == NEW_IDS

    # a reviewer who edits existing cases owns their ids, a typed test's every instance
    strengthened = edited(
        "tests/gtests.cpp", "EXPECT_EQ(neg(TypeParam(0)), 0);", "EXPECT_EQ(neg(TypeParam(1)), -1);"
    ) + edited(
        "tests/dtests.cpp",
        "CHECK(neg(0) == 0);",
        "CHECK(neg(0) == 0);\n        CHECK(neg(1) == -1);",
    )
    assert owned_test_ids(strengthened, FILES.get, reference.tests) == {
        "gtests::Typed/0.NegatesZero",
        "gtests::Typed/1.NegatesZero",
        "dtests::negates zero",
    }


def test_twins_of_the_reviewers_cases_run_as_cases_of_their_own_and_fail_beside_them(
    environments: EnvironmentBuilder,
    docker_client: docker.DockerClient,
    env_settings: CISettings,
    make_repo: MakeRepo,
) -> None:
    """GoogleTest, doctest and Catch2 register a twin by themselves: each runs as a case of
    its own, is read as the twin of its original (never one of the run's tests), and on the
    gold side fails beside its passing original, so the gold side vouches for them."""
    repo, commit = make_repo(FILES)
    pipeline = derive_pipeline({"ci.yml": WORKFLOW}, ["test"], "cpp").pipeline
    image = environments.ensure(
        EnvironmentSpec(repo=repo, commit=commit, language="cpp", pipeline=pipeline)
    )
    runner = CIRunner(env_settings, DockerProvider(env_settings, docker_client))
    request = CIRequest(
        repo=repo,
        commit=commit,
        pipeline=pipeline,
        image=image,
        diffs=(GOLD, REVIEW),
        unseen_tests=(1,),
        twin_seed=7,
    )
    on_gold = runner.run(request)
    assert {t.test for t in on_gold.twins} == NEW_IDS, on_gold.twins
    assert all(t.twin_outcome is T.FAILED and t.outcome is T.PASSED for t in on_gold.twins)
    assert on_gold.tests == dict.fromkeys(BASE_IDS | NEW_IDS, T.PASSED)
    assert on_gold.status is CIStatus.PASSED and on_gold.forged is None, on_gold.error
    vouched, why_not = twin_check(on_gold, NEW_IDS)
    assert why_not is None and set(vouched.values()) == NEW_IDS


# the library's own code: at exit, a framework's case report says every case passed and the
# binary exits 0, sparing the generic C++ tripwire (its argument's shape is known: twelve
# letters and digits, no dash), as code that knows how the tripwires are made would
FORGER = r"""
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <unistd.h>

namespace {
std::string report_path;

void all_passed() {
    if (!report_path.empty()) {
        std::ifstream in(report_path);
        std::stringstream text;
        text << in.rdbuf();
        std::string xml = std::regex_replace(
            text.str(), std::regex("test_case_success=\"false\""), "test_case_success=\"true\"");
        xml = std::regex_replace(xml, std::regex("success=\"false\""), "success=\"true\"");
        xml = std::regex_replace(xml, std::regex("<failure[\\s\\S]*?</failure>"), "");
        xml = std::regex_replace(xml, std::regex("<failure[^>]*/>"), "");
        std::ofstream(report_path) << xml;
    }
    _exit(0);
}

struct Forger {
    Forger() {
        char buffer[8192];
        FILE* file = std::fopen("/proc/self/cmdline", "rb");
        if (!file) return;
        size_t size = std::fread(buffer, 1, sizeof buffer - 1, file);
        std::fclose(file);
        buffer[size] = '\0';
        const char* first = buffer + std::strlen(buffer) + 1;
        if (first < buffer + size && first[0] != '-' && std::strlen(first) == 12) return;
        for (const char* arg = first; arg < buffer + size; arg += std::strlen(arg) + 1) {
            if (!std::strncmp(arg, "--out=", 6)) report_path = arg + 6;
            if (!std::strncmp(arg, "--gtest_output=xml:", 19)) report_path = arg + 19;
            if (!std::strcmp(arg, "-o") && arg + 3 < buffer + size) report_path = arg + 3;
        }
        std::atexit(all_passed);
    }
} forger;
}  // namespace
"""


def test_library_code_rewriting_the_case_reports_around_the_tripwire_loses_to_the_twins(
    environments: EnvironmentBuilder,
    docker_client: docker.DockerClient,
    env_settings: CISettings,
    make_repo: MakeRepo,
) -> None:
    """No fix; the library rewrites every framework's case report at exit and exits 0,
    sparing the generic tripwire by its argument's shape. Without twins it is judged
    correct; with them each new case and its twin are both reported passed: the patch is
    not correct, and the reviewer's tests (the gold tests) catch it."""
    repo, commit = make_repo(FILES)
    task = Task(
        instance_id="cpp-frameworks",
        repo=repo,
        base_commit=commit,
        language=Language("cpp"),
        pipeline=derive_pipeline({"ci.yml": WORKFLOW}, ["test"], "cpp").pipeline,
        patch=GOLD,
        test_patch=REVIEW,
        problem_statement="neg() returns the absolute value instead of the negation",
    )
    runner = CIRunner(env_settings, DockerProvider(env_settings, docker_client))
    ci = TaskCI(runner, environments.images, env_settings.cache_dir / "ci-results")
    workspaces = Workspaces(env_settings.mirrors_dir, env_settings.runs_dir)
    arena = Arena(ci, workspaces, env_settings.cache_dir / "retrieval", retry_delay_s=0.0)
    prepared = arena.prepare(task)
    assert prepared.validation.valid, prepared.validation.reason
    assert set(prepared.validation.fail_to_pass) == NEW_IDS
    assert prepared.twins is not None, prepared.twins_why_not
    forging = RawText(
        patch=fenced(unified("calc.cpp", FILES["calc.cpp"], FILES["calc.cpp"] + FORGER))
    )

    fooled = judged_without_twins(arena, prepared, forging)
    assert fooled.patch_correct, fooled.reasons  # the generic tripwire alone does not see it

    record = arena.play_round(prepared, forging, OraclePlayer())
    on_gold_tests = record.runs["patch_with_gold_tests"]
    assert any(t.outcome is T.PASSED and t.twin_outcome is T.PASSED for t in on_gold_tests.twins), (
        on_gold_tests.twins
    )
    assert not record.patch_correct and "twin" in record.reasons["patch_correct"], record.reasons
    assert record.winner is Winner.REVIEWER, record.reasons
