"""Projects for environment images: setup steps that install something, builds worth caching."""

from __future__ import annotations

from ci_runner import Pipeline

PYTHON_FILES = {
    "pyproject.toml": (
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "uses-six"\nversion = "0.1"\n\n'
        '[tool.setuptools]\npy-modules = ["uses_six"]\n'
    ),
    "uses_six.py": "import six\n\n\ndef text_type():\n    return six.text_type\n",
    "test_uses_six.py": (
        "from uses_six import text_type\n\n\ndef test_text_type():\n    assert text_type() is str\n"
    ),
}


def python_pipeline(setup: str = "pip install six") -> Pipeline:
    """Setup pip-installs a real PyPI package; the CI steps reinstall it offline, as tox would."""
    return Pipeline.model_validate(
        {
            "setup": [{"name": "deps", "run": setup}],
            "steps": [
                {"name": "offline", "run": 'test "$(ls /sys/class/net)" = lo'},
                {
                    "name": "fresh venv",
                    "run": "python -m venv /tmp/tox-like && /tmp/tox-like/bin/pip install six "
                    "&& /tmp/tox-like/bin/python -c 'import six'",
                },
                {"name": "install the repo", "run": "pip install ."},  # isolated build
                {
                    "name": "test",
                    "run": "python -m pytest -q -p no:cacheprovider --junitxml=report.xml",
                },
            ],
            "report": {"format": "junit", "path": "report.xml"},
        }
    )


GO_FILES = {
    "go.mod": "module example.com/shapes\n\ngo 1.19\n",
    "area/area.go": "package area\n\nfunc Square(s int) int { return s * s }\n",
    "area/area_test.go": (
        'package area\n\nimport "testing"\n\nfunc TestSquare(t *testing.T) {\n'
        '\tif Square(3) != 9 {\n\t\tt.Fatal("Square")\n\t}\n}\n'
    ),
    "perimeter/perimeter.go": "package perimeter\n\nfunc Square(s int) int { return 4 * s }\n",
    "perimeter/perimeter_test.go": (
        'package perimeter\n\nimport "testing"\n\nfunc TestSquare(t *testing.T) {\n'
        '\tif Square(3) != 12 {\n\t\tt.Fatal("Square")\n\t}\n}\n'
    ),
}

GO_PIPELINE = Pipeline.model_validate(
    {
        "setup": [{"name": "modules", "run": "go mod download"}],
        "steps": [
            {"name": "offline", "run": 'test "$(go env GOPROXY)" = off'},
            {"name": "test", "run": "go test -json ./... > report.json"},
        ],
        "report": {"format": "go-json", "path": "report.json"},
    }
)

RUST_CRATES = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta")


def _rust_crate(name: str, functions: int) -> str:
    """A crate with enough generic code that compiling it takes a noticeable moment."""
    parts = []
    for n in range(functions):
        parts.append(
            f"pub fn {name}_{n}<T: Copy + std::ops::Add<Output = T>>(xs: &[T], zero: T) -> T {{\n"
            f"    xs.iter().fold(zero, |acc, x| acc + *x)\n}}\n"
        )
    body = "".join(parts)
    tests = "".join(
        f"    #[test]\n    fn sums_{n}() {{\n        assert_eq!(super::{name}_{n}(&[1, 2, 3], 0), 6);"
        f"\n        assert_eq!(super::{name}_{n}(&[1.5, 2.5], 0.0), 4.0);\n    }}\n"
        for n in range(functions)
    )
    return f"{body}\n#[cfg(test)]\nmod tests {{\n{tests}}}\n"


def rust_files(functions: int = 20) -> dict[str, str]:
    """A cargo workspace of several crates with no external dependencies."""
    members = ", ".join(f'"{c}"' for c in RUST_CRATES)
    files = {"Cargo.toml": f"[workspace]\nmembers = [{members}]\n"}
    for crate in RUST_CRATES:
        files[f"{crate}/Cargo.toml"] = (
            f'[package]\nname = "{crate}"\nversion = "0.1.0"\nedition = "2021"\n'
        )
        files[f"{crate}/src/lib.rs"] = _rust_crate(crate, functions)
    return files


def rust_patch(crate: str = "delta") -> str:
    """Appends a function to one crate: only that crate has to compile again."""
    path = f"{crate}/src/lib.rs"
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -1,3 +1,5 @@\n+pub fn added() -> u8 {{ 1 }}\n+\n"
        f" pub fn {crate}_0<T: Copy + std::ops::Add<Output = T>>(xs: &[T], zero: T) -> T {{\n"
        f"     xs.iter().fold(zero, |acc, x| acc + *x)\n }}\n"
    )


RUST_PIPELINE = Pipeline.model_validate(
    {
        "env": {"CARGO_TERM_COLOR": "never"},
        "setup": [{"name": "fetch", "run": "cargo fetch"}],
        "steps": [
            {"name": "offline", "run": 'test "$CARGO_NET_OFFLINE" = true'},
            {"name": "test", "run": "cargo test --no-fail-fast 2>&1 | tee report.txt"},
        ],
        "report": {"format": "libtest", "path": "report.txt"},
    }
)


def compiled_crates(log: str) -> set[str]:
    """The crates cargo compiled in a step's log."""
    return {
        line.split()[1]
        for line in log.splitlines()
        if line.strip().startswith("Compiling ") and len(line.split()) > 1
    }


CPP_FILES = {
    "CMakeLists.txt": (
        "cmake_minimum_required(VERSION 3.16)\nproject(crc CXX)\nfind_package(ZLIB REQUIRED)\n"
        "enable_testing()\nadd_library(crc crc.cpp)\ntarget_link_libraries(crc ZLIB::ZLIB)\n"
        "add_executable(test_crc test_crc.cpp)\ntarget_link_libraries(test_crc crc)\n"
        "add_test(NAME crc_of_hello COMMAND test_crc)\n"
    ),
    "crc.hpp": "#include <string>\nunsigned long crc_of(const std::string& s);\n",
    "crc.cpp": (
        '#include "crc.hpp"\n#include <zlib.h>\n\nunsigned long crc_of(const std::string& s) {\n'
        "    return crc32(0L, reinterpret_cast<const Bytef*>(s.data()), s.size());\n}\n"
    ),
    "test_crc.cpp": (
        '#include "crc.hpp"\n\nint main() { return crc_of("hello") == 0x3610a686UL ? 0 : 1; }\n'
    ),
}

CPP_PIPELINE = Pipeline.model_validate(
    {
        "setup": [
            {
                "name": "apt",
                "run": "sudo apt-get update -q && sudo apt-get install -y -q --no-install-recommends zlib1g-dev",
            }
        ],
        "steps": [
            {"name": "build", "run": "cmake -S . -B build && cmake --build build"},
            {"name": "test", "run": "cd build && ctest --output-junit ../report.xml"},
            {"name": "cache", "run": "ccache --show-stats"},
        ],
        "report": {"format": "junit", "path": "report.xml"},
    }
)
