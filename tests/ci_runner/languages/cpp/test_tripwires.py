"""C and C++ tripwires without a sandbox: where the CMake block goes, which target it runs,
and what real CMake, a C and a C++ project, and ctest make of it, honest or forged."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ci_runner import TestOutcome
from ci_runner.languages.cpp.tripwires import plant, target_of_test
from ci_runner.pipeline import ReportFormat
from ci_runner.reports import parse_report
from ci_runner.reports.binaries import whole_binaries

P, F = TestOutcome.PASSED, TestOutcome.FAILED


@pytest.mark.parametrize(
    ("arguments", "target"),
    [
        ("NAME unit COMMAND unit_tests --all", "unit_tests"),
        ("NAME unit COMMAND $<TARGET_FILE:unit_tests>", "unit_tests"),
        ("unit unit_tests", "unit_tests"),
        ("NAME py COMMAND ${Python_EXECUTABLE} run.py", None),
        ("NAME script COMMAND ./run.sh", None),
        ("NAME lonely", None),
    ],
)
def test_the_target_an_add_test_runs(arguments: str, target: str | None) -> None:
    assert target_of_test(arguments) == target


MAIN = """#include <stdio.h>
#include <string.h>
#include "lib.h"

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    if (strcmp(argv[1], "doubles") == 0) return twice(2) == 4 ? 0 : 1;
    if (strcmp(argv[1], "triples") == 0) return twice(3) == 9 ? 0 : 1;
    fprintf(stderr, "no test %s\\n", argv[1]);
    return 3;
}
"""
HEADER = "int twice(int x);\n"
FORGING_HEADER = HEADER + (
    "#include <stdlib.h>\n#include <unistd.h>\n"
    "static void quietly(void) { _exit(0); }\n"
    "__attribute__((constructor)) static void exits_well(void) { atexit(quietly); }\n"
)


def project(root: Path, language: str, header: str = HEADER) -> Path:
    """A project whose tests are in a subfolder: one that fails, one that passes."""
    suffix = "c" if language == "C" else "cpp"
    (root / "tests").mkdir(parents=True)
    (root / "CMakeLists.txt").write_text(
        f"cmake_minimum_required(VERSION 3.13)\nproject(calc {language})\n"
        "enable_testing()\nadd_subdirectory(tests)\n"
    )
    (root / f"lib.{suffix}").write_text('#include "lib.h"\nint twice(int x) { return 2 * x; }\n')
    (root / "lib.h").write_text(header)
    (root / "tests" / f"main.{suffix}").write_text(MAIN)
    (root / "tests" / "CMakeLists.txt").write_text(
        f"add_executable(calc_tests main.{suffix} ../lib.{suffix})\n"
        "target_include_directories(calc_tests PRIVATE ..)\n"
        "# add_test(NAME commented COMMAND not_a_target)\n"
        "add_test(NAME doubles COMMAND calc_tests doubles)\n"
        "add_test(NAME triples COMMAND $<TARGET_FILE:calc_tests> triples)\n"
    )
    return root


def ctest(root: Path) -> dict[str, TestOutcome]:
    build = root / "build"
    subprocess.run(["cmake", "-S", str(root), "-B", str(build)], check=True, capture_output=True)
    subprocess.run(["cmake", "--build", str(build)], check=True, capture_output=True)
    subprocess.run(
        ["ctest", "--output-junit", "report.xml"], cwd=build, capture_output=True, check=False
    )
    return parse_report(ReportFormat.CTEST, (build / "report.xml").read_bytes())


def planted(root: Path) -> tuple[str, str, str]:
    (site,) = plant(root, frozenset({"lib.h"}), with_failing=True)
    assert site.failing is not None
    for relative, data in site.files.items():
        (root / relative).write_bytes(data)
    return site.names[0], site.passing, site.failing


@pytest.mark.parametrize("language", ["C", "CXX"])
def test_the_test_binary_runs_the_tripwires_beside_the_projects_tests(
    tmp_path: Path, language: str
) -> None:
    root = project(tmp_path, language)
    module, passing, failing = planted(root)
    tests = ctest(root)
    assert tests == {
        "doubles": P,
        "triples": F,
        f"{module}_{passing}": P,
        f"{module}_{failing}": F,
    }


def test_a_header_that_makes_every_process_exit_zero_passes_the_tripwire_that_must_fail(
    tmp_path: Path,
) -> None:
    root = project(tmp_path, "C", FORGING_HEADER)
    module, _, failing = planted(root)
    tests = ctest(root)
    assert tests["triples"] is P  # the forgery took
    assert tests[f"{module}_{failing}"] is P  # and the runner sees it


def test_no_site_without_a_diff_or_an_add_test_running_a_target(tmp_path: Path) -> None:
    root = project(tmp_path, "C")
    assert plant(root, frozenset(), with_failing=True) == []
    (root / "tests" / "CMakeLists.txt").write_text(
        "add_executable(tool tool.c)\nadd_test(NAME py COMMAND python3 t.py)\n"
    )
    assert plant(root, frozenset({"lib.h"}), with_failing=True) == []


def listing(*tests: tuple[str, list[str]]) -> bytes:
    return json.dumps(
        {"tests": [{"name": name, "command": command} for name, command in tests]}
    ).encode()


def test_the_tripwires_registrations_never_make_a_binary_look_registered_twice() -> None:
    binary = "/workspace/build/unit_tests"
    tree = listing(("unit", [binary]), ("abc123def456_ghi789jkl012", [binary, "ghi789jkl012"]))
    ran = {"unit"}
    assert whole_binaries([("/workspace/build", tree)], ran, "/workspace") == []
    found = whole_binaries(
        [("/workspace/build", tree)], ran, "/workspace", {"abc123def456_ghi789jkl012"}
    )
    assert [b.name for b in found] == ["unit"]


@pytest.mark.parametrize(
    "registration",
    [
        "gtest_discover_tests(calc_tests)\n",
        # doctest's own CMake: a wrapper of add_test given the executable through a variable
        "set(common COMMAND $<TARGET_FILE:calc_tests> --no-version)\n"
        "doctest_add_test(NAME doubles ${common} doubles)\n",
    ],
)
def test_a_frameworks_discovery_or_a_wrapper_of_add_test_names_the_executable(
    tmp_path: Path, registration: str
) -> None:
    root = project(tmp_path, "C")
    (root / "tests" / "CMakeLists.txt").write_text(
        "add_executable(calc_tests main.c ../lib.c)\n" + registration
    )
    (site,) = plant(root, frozenset({"lib.h"}), with_failing=True)
    assert site.label == "cpp tests/CMakeLists.txt"
    block = site.files["tests/CMakeLists.txt"].decode()
    assert f"COMMAND calc_tests {site.passing})" in block


def test_the_tripwire_source_is_no_file_a_projects_glob_can_take(tmp_path: Path) -> None:
    """A project making one executable of every source in its test folder (each with its own
    main) would link one without main if the tripwire's source lay there: it is written into
    the build folder when CMake configures."""
    root = project(tmp_path, "C")
    (root / "tests" / "CMakeLists.txt").write_text(
        "add_executable(calc_tests main.c ../lib.c)\n"
        "target_include_directories(calc_tests PRIVATE ..)\n"
        "add_test(NAME doubles COMMAND calc_tests doubles)\n"
        "file(GLOB every_source ${CMAKE_CURRENT_SOURCE_DIR}/*.c)\n"
        "foreach(source ${every_source})\n"
        "  get_filename_component(name ${source} NAME_WE)\n"
        "  add_executable(each_${name} ${source} ../lib.c)\n"
        "  target_include_directories(each_${name} PRIVATE ..)\n"
        "endforeach()\n"
    )
    module, passing, failing = planted(root)
    assert sorted(p.name for p in (root / "tests").iterdir()) == ["CMakeLists.txt", "main.c"]
    tests = ctest(root)  # configures, builds every executable, runs
    assert tests == {"doubles": P, f"{module}_{passing}": P, f"{module}_{failing}": F}
