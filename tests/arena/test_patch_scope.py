"""P' (a patch without its test and CI changes), N(P') and the source-reading flag, table in,
table out."""

from __future__ import annotations

import pytest

from arena.ownership.changes import file_changes
from arena.patch_scope import NEUTRAL_LINE, neutral_change, scope_patch
from arena.source_reading import program_reading_tests, source_reads
from arena.unified import unified_diff

BASE = {
    "pkg/calc.py": "def add(a, b):\n    return a - b\n",
    "tests/test_calc.py": "def test_add():\n    assert True\n",
    "pyproject.toml": (
        '[project]\nname = "calc"\nversion = "1"\n\n'
        '[tool.pytest.ini_options]\naddopts = "-q"\n\n[tool.ruff]\nline-length = 99\n'
    ),
    "src/lib.rs": (
        "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n"
        "#[cfg(test)]\nmod tests {\n    use super::*;\n\n"
        "    #[test]\n    fn adds() {\n        assert_eq!(add(1, 1), 2);\n    }\n}\n"
    ),
    "include/check.h": "#define CHECK(x) if (!(x)) abort()\n",
}


def read_base(path: str) -> str | None:
    return BASE.get(path)


def change(path: str, old: str, new: str) -> str:
    before = BASE[path]
    assert old in before
    return unified_diff(path, before, before.replace(old, new, 1))


FIX = change("pkg/calc.py", "a - b", "a + b")


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("conftest.py", "test configuration"),
        ("pkg/conftest.py", "test configuration"),
        ("pytest/__init__.py", "shadows a test tool"),
        ("unittest.py", "shadows a test tool"),
        ("sitecustomize.py", "shadows a test tool"),
        ("tox.ini", "test configuration"),
        ("noxfile.py", "test configuration"),
        (".github/workflows/ci.yml", "CI configuration"),
        ("tests/test_new.py", "test folder"),
        ("pkg/test_things.py", "test file"),
        ("calc_test.go", "test file"),
        ("third_party/doctest/doctest.h", "test harness"),
        ("src/strutil_test.cpp", "test file"),
        ("web/src/app.test.ts", "test file"),
        # modules pytest imports, where imports start
        ("iniconfig/__init__.py", "shadows a test tool"),
        ("src/packaging/version.py", "shadows a test tool"),
        ("attr/__init__.py", "shadows a test tool"),
        ("pluggy/_hooks.py", "shadows a test tool"),
        ("sitecustomize/__init__.py", "shadows a test tool"),
        # a folder named testing that is no package of a library: a test suite's
        ("testing/helpers.py", "test folder"),
        ("pkg/tests/helpers.py", "test folder"),
    ],
)
def test_a_new_file_of_test_infrastructure_is_dropped(path: str, why: str) -> None:
    scoped = scope_patch(FIX + unified_diff(path, None, "x = 1\n"), "", "", read_base)
    assert scoped.dropped == (f"{path} ({why})",)
    assert [c.new_path for c in file_changes(scoped.kept, read_base)] == ["pkg/calc.py"]


@pytest.mark.parametrize(
    "files",
    [
        # numpy.testing-style: the library's own package, which its users import
        {"pkg/__init__.py": "", "pkg/testing/__init__.py": "", "pkg/testing/utils.py": "x = 1\n"},
        {"pkg/__init__.py": "", "pkg/test/__init__.py": "", "pkg/test/utils.py": "x = 1\n"},
        # a module of the library that happens to be named as a pytest dependency
        {"pkg/__init__.py": "", "pkg/packaging/__init__.py": "", "pkg/packaging/utils.py": ""},
    ],
)
def test_library_code_in_a_folder_named_testing_is_kept(files: dict[str, str]) -> None:
    diff = FIX + "".join(
        unified_diff(path, None, text or "y = 2\n") for path, text in files.items()
    )
    scoped = scope_patch(diff, "", "", read_base)
    assert scoped.kept == diff and not scoped.dropped, scoped.dropped


def test_a_patch_without_test_changes_is_kept_as_written() -> None:
    scoped = scope_patch(FIX, "", "", read_base)
    assert scoped.kept == FIX and not scoped.dropped


def test_files_the_gold_tests_change_are_dropped_and_the_gold_fixs_files_are_kept() -> None:
    tests = change("tests/test_calc.py", "assert True", "assert add(1, 1) == 2")
    conftest = unified_diff("conftest.py", None, "import os\n")
    scoped = scope_patch(
        FIX + tests + conftest,
        gold_patch=FIX + conftest,
        gold_test_patch=tests,
        read_base=read_base,
    )
    assert scoped.dropped == ("tests/test_calc.py (a file the gold tests change)",)
    kept = {c.new_path for c in file_changes(scoped.kept, read_base)}
    assert kept == {"pkg/calc.py", "conftest.py"}


def test_only_the_test_sections_of_a_shared_configuration_file_are_dropped() -> None:
    both = change("pyproject.toml", 'addopts = "-q"', 'addopts = "-q -p no:randomly"')
    both += ""
    scoped = scope_patch(FIX + both, "", "", read_base)
    assert scoped.dropped == ("pyproject.toml (1 hunk(s) inside test code or test settings)",)
    ruff = change("pyproject.toml", "line-length = 99", "line-length = 100")
    assert scope_patch(ruff, "", "", read_base).dropped == ()


def test_a_rust_patch_keeps_its_fix_and_loses_its_test_module_hunks() -> None:
    source = BASE["src/lib.rs"]
    after = source.replace("a - b", "a + b").replace("add(1, 1), 2", "add(1, 1), 0")
    scoped = scope_patch(unified_diff("src/lib.rs", source, after), "", "", read_base)
    assert scoped.dropped == ("src/lib.rs (1 hunk(s) inside test code or test settings)",)
    (kept,) = file_changes(scoped.kept, read_base)
    assert "a + b" in kept.new_text and "add(1, 1), 2" in kept.new_text


def test_a_rust_patch_whose_hunk_spans_fix_and_tests_is_kept_whole() -> None:
    source = BASE["src/lib.rs"]
    after = source.replace("a - b", "a + b").replace("use super::*;", "use super::add;")
    scoped = scope_patch(unified_diff("src/lib.rs", source, after), "", "", read_base)
    assert not scoped.dropped


def _after(*diffs: str) -> dict[str, str]:
    """Each file's text after the diffs, applied in order (as a CI run applies them)."""
    texts: dict[str, str] = {}

    def read(path: str) -> str | None:
        return texts.get(path, read_base(path))

    for diff in diffs:
        for change in file_changes(diff, read):
            if change.new_path is not None:
                texts[change.new_path] = change.new_text
    return texts


def test_the_neutral_change_appends_a_comment_to_each_file_it_can() -> None:
    data = unified_diff("data.json", None, "{}\n")
    neutral, changed = neutral_change(FIX + data, read_base)
    assert changed == ("pkg/calc.py",)
    after = _after(FIX + data, neutral)
    assert after["pkg/calc.py"] == f"def add(a, b):\n    return a + b\n# {NEUTRAL_LINE}\n"
    assert after["data.json"] == "{}\n"


def test_the_neutral_change_follows_every_section_of_a_file_and_keeps_its_mode() -> None:
    """P' is applied as it is (its mode change stays), and the comment goes on the file as
    its two sections leave it, not as the last one alone would."""
    source = BASE["pkg/calc.py"]
    first = unified_diff("pkg/calc.py", source, source.replace("a - b", "a + b"))
    fixed = source.replace("a - b", "a + b")
    second = unified_diff("pkg/calc.py", fixed, fixed + "\n\ndef sub(a, b):\n    return a - b\n")
    mode = "diff --git a/pkg/calc.py b/pkg/calc.py\nold mode 100644\nnew mode 100755\n"
    patch = first + second + mode
    neutral, changed = neutral_change(patch, read_base)
    assert changed == ("pkg/calc.py",)
    after = _after(first, second, neutral)["pkg/calc.py"]
    assert "a + b" in after and "def sub" in after and after.endswith(f"# {NEUTRAL_LINE}\n")
    assert "mode" not in neutral  # the mode change is P''s own, applied before


def test_the_neutral_change_of_an_empty_patch_is_empty() -> None:
    assert neutral_change("", read_base) == ("", ())


@pytest.mark.parametrize(
    ("line", "flagged"),
    [
        ("    text = pathlib.Path('textkit/slug.py').read_bytes()", True),
        ("    src = inspect.getsource(slugify)", True),
        ('    data, _ := os.ReadFile("lru.go")', True),
        ('    let s = include_str!("../src/lib.rs");', True),
        ('    std::ifstream in("src/strutil.cpp");', True),
        ("    assert slugify('a b') == 'a-b'", False),
        ("    with open('fixture.json') as f:", False),
        ("    assert 'rstrip' not in slugify.__code__.co_names", True),
        ("    names = [i.opname for i in dis.get_instructions(slugify)]", True),
        ("    tree = ast.parse(inspect.getsource(slugify))", True),
        ("    tree = ast.parse('x = 1')", False),  # an AST project's own behaviour
        ("    assert os.stat('textkit/slug.py').st_size < 900", True),
        ("    assert os.path.getmtime(slug_module.__file__) > 0", True),
        ("    assert 'rstrip' not in open(slug_module.__file__).read()", True),
        # a fixture beside the test file is data, not the program
        ("    data = open(os.path.join(os.path.dirname(__file__), 'cases.json')).read()", False),
        ("    text = Path(__file__).with_name('expected.txt').read_text()", False),
        ("    assert Path(out).stat().st_size > 0", False),  # the program's output
        ("//go:embed lru.go", True),
        ('    let meta = fs::metadata("src/lib.rs").unwrap();', True),
    ],
)
def test_reviewer_lines_reading_source_files_as_text_are_flagged(line: str, flagged: bool) -> None:
    diff = unified_diff("tests/test_x.py", "", f"def test_x():\n{line}\n")
    assert bool(source_reads(diff)) is flagged


_TESTS_BEFORE = "from pkg.calc import add\n\n\ndef test_old():\n    assert add(1, 1) == 2\n"


@pytest.mark.parametrize(
    ("added", "reading"),
    [
        # a reading line inside a test: that test only
        (
            "\n\ndef test_fixed():\n    assert add(2, 2) == 4\n"
            "\n\ndef test_shape():\n    assert 'a + b' in open('pkg/calc.py').read()\n",
            {"tests/test_calc.py::test_shape"},
        ),
        # a helper that reads: any test of its file may call it
        (
            "\n\ndef _source():\n    return inspect.getsource(add)\n"
            "\n\ndef test_fixed():\n    assert add(2, 2) == 4\n",
            {"tests/test_calc.py::test_fixed", "tests/test_calc.py::test_old"},
        ),
        ("\n\ndef test_fixed():\n    assert add(2, 2) == 4\n", set()),
    ],
)
def test_the_tests_that_read_the_program_are_named(added: str, reading: set[str]) -> None:
    diff = unified_diff("tests/test_calc.py", _TESTS_BEFORE, _TESTS_BEFORE + added)
    ids = ["tests/test_calc.py::test_old", "tests/test_calc.py::test_fixed",
           "tests/test_calc.py::test_shape"]  # fmt: skip
    found = program_reading_tests(diff, {"tests/test_calc.py": _TESTS_BEFORE}.get, ids)
    assert set(found) == reading
    assert all(why.startswith("tests/test_calc.py: ") for why in found.values())


_CMAKE = (
    "add_library(strutil src/strutil.cpp)\n"
    "add_executable(strutil_tests tests/strutil_tests.cpp)\n"
    "add_test(NAME strutil\n    COMMAND strutil_tests)\n"
)


def test_a_cmake_files_test_registration_is_dropped_and_its_build_kept() -> None:
    """Changing which tests CTest runs (or how) is test infrastructure; the library's build
    lines are code."""
    read = {"CMakeLists.txt": _CMAKE}.get
    registration = unified_diff(
        "CMakeLists.txt", _CMAKE, _CMAKE.replace("COMMAND strutil_tests)", "COMMAND true)")
    )
    scoped = scope_patch(registration, "", "", read)
    assert scoped.kept == "" and scoped.dropped == (
        "CMakeLists.txt (1 hunk(s) inside test code or test settings)",
    )
    build = unified_diff("CMakeLists.txt", _CMAKE, _CMAKE.replace("src/strutil.cpp", "src/s.cpp"))
    assert scope_patch(build, "", "", read).kept == build
