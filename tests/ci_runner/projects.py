"""Tiny projects in each language: an add() bug, a correct fix, a wrong fix, a stale diff."""

from __future__ import annotations

from dataclasses import dataclass

from ci_runner import Pipeline


@dataclass(frozen=True)
class Project:
    language: str
    files: dict[str, str]
    pipeline: Pipeline
    fix: str
    wrong_fix: str
    stale: str
    test_add: str  # id of the test that the bug breaks
    test_other: str  # id of a test that passes either way
    source: str  # the file the diffs touch


def _diff(
    path: str, old_line: str, new_line: str, context_before: str, context_after: str, start: int = 1
) -> str:
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -{start},3 +{start},3 @@\n {context_before}\n-{old_line}\n+{new_line}\n {context_after}\n"
    )


PROJECTS: list[Project] = []

PYTHON = Project(
    language="python",
    files={
        "calc.py": "def add(a, b):\n    return a - b\n\n\ndef neg(a):\n    return -a\n",
        "test_calc.py": (
            "from calc import add, neg\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
            "def test_neg():\n    assert neg(2) == -2\n"
        ),
    },
    pipeline=Pipeline.model_validate(
        {
            "steps": [
                {
                    "name": "test",
                    "run": "python3 -m pytest -q -p no:cacheprovider --junitxml=report.xml",
                }
            ],
            "report": {"format": "junit", "path": "report.xml"},
        }
    ),
    fix=_diff("calc.py", "    return a - b", "    return a + b", "def add(a, b):", ""),
    wrong_fix=_diff("calc.py", "    return a - b", "    return a * b", "def add(a, b):", ""),
    stale=_diff("calc.py", "    return a / b", "    return a + b", "def add(a, b):", ""),
    test_add="test_calc::test_add",
    test_other="test_calc::test_neg",
    source="calc.py",
)

_GO_ADD = "func Add(a, b int) int {"

GO = Project(
    language="go",
    files={
        "go.mod": "module example.com/calc\n\ngo 1.19\n",
        "calc.go": "package calc\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n\nfunc Neg(a int) int { return -a }\n",
        "calc_test.go": (
            'package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n'
            '\t\tt.Fatalf("Add(2, 3) = %d", Add(2, 3))\n\t}\n}\n\nfunc TestNeg(t *testing.T) {\n'
            '\tif Neg(2) != -2 {\n\t\tt.Fatal("Neg")\n\t}\n}\n'
        ),
    },
    pipeline=Pipeline.model_validate(
        {
            "env": {"GOFLAGS": "-mod=mod", "GOPROXY": "off"},
            "steps": [{"name": "test", "run": "go test -json ./... > report.json"}],
            "report": {"format": "go-json", "path": "report.json"},
        }
    ),
    fix=_diff("calc.go", "\treturn a - b", "\treturn a + b", _GO_ADD, "}", start=3),
    wrong_fix=_diff("calc.go", "\treturn a - b", "\treturn a * b", _GO_ADD, "}", start=3),
    stale=_diff("calc.go", "\treturn b - a", "\treturn a + b", _GO_ADD, "}", start=3),
    test_add="example.com/calc::TestAdd",
    test_other="example.com/calc::TestNeg",
    source="calc.go",
)

RUST = Project(
    language="rust",
    files={
        "Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
        "src/lib.rs": (
            "pub fn add(a: i64, b: i64) -> i64 {\n    a - b\n}\n\npub fn neg(a: i64) -> i64 {\n    -a\n}\n\n"
            "#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n"
            "        assert_eq!(add(2, 3), 5);\n    }\n\n    #[test]\n    fn negates() {\n"
            "        assert_eq!(neg(2), -2);\n    }\n}\n"
        ),
    },
    pipeline=Pipeline.model_validate(
        {
            "steps": [{"name": "test", "run": "cargo test --offline 2>&1 | tee report.txt"}],
            "report": {"format": "libtest", "path": "report.txt"},
        }
    ),
    fix=_diff("src/lib.rs", "    a - b", "    a + b", "pub fn add(a: i64, b: i64) -> i64 {", "}"),
    wrong_fix=_diff(
        "src/lib.rs", "    a - b", "    a * b", "pub fn add(a: i64, b: i64) -> i64 {", "}"
    ),
    stale=_diff("src/lib.rs", "    b - a", "    a + b", "pub fn add(a: i64, b: i64) -> i64 {", "}"),
    test_add="src/lib.rs::tests::adds",
    test_other="src/lib.rs::tests::negates",
    source="src/lib.rs",
)

_CPP_ADD = "int add(int a, int b) {"

CPP = Project(
    language="cpp",
    files={
        "CMakeLists.txt": (
            "cmake_minimum_required(VERSION 3.16)\nproject(calc CXX)\nenable_testing()\n"
            "add_library(calc calc.cpp)\nadd_executable(calc_tests calc_tests.cpp)\n"
            "target_link_libraries(calc_tests calc)\n"
            "add_test(NAME add COMMAND calc_tests add)\nadd_test(NAME neg COMMAND calc_tests neg)\n"
        ),
        "calc.h": "#pragma once\nint add(int a, int b);\nint neg(int a);\n",
        "calc.cpp": '#include "calc.h"\nint add(int a, int b) {\n    return a - b;\n}\nint neg(int a) { return -a; }\n',
        "calc_tests.cpp": (
            '#include "calc.h"\n#include <cstring>\n#include <cstdio>\n\nint main(int argc, char** argv) {\n'
            '    if (argc < 2) return 2;\n    if (std::strcmp(argv[1], "add") == 0) return add(2, 3) == 5 ? 0 : 1;\n'
            '    if (std::strcmp(argv[1], "neg") == 0) return neg(2) == -2 ? 0 : 1;\n    return 2;\n}\n'
        ),
    },
    pipeline=Pipeline.model_validate(
        {
            "steps": [
                {"name": "configure", "run": "cmake -S . -B build -DCMAKE_BUILD_TYPE=Debug"},
                {"name": "build", "run": "cmake --build build -j2"},
                {"name": "test", "run": "ctest --output-junit report.xml", "workdir": "build"},
            ],
            "report": {"format": "ctest", "path": "build/report.xml"},
        }
    ),
    fix=_diff("calc.cpp", "    return a - b;", "    return a + b;", _CPP_ADD, "}", start=2),
    wrong_fix=_diff("calc.cpp", "    return a - b;", "    return a * b;", _CPP_ADD, "}", start=2),
    stale=_diff("calc.cpp", "    return b - a;", "    return a + b;", _CPP_ADD, "}", start=2),
    test_add="add",
    test_other="neg",
    source="calc.cpp",
)

PROJECTS.extend([PYTHON, GO, RUST, CPP])
