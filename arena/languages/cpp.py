"""C++ tasks: C and C++ sources and headers, CMake's files, ctest and framework case ids."""

import tree_sitter_cpp

from arena.languages.profile import Language, TaskProfile
from arena.ownership.cpp import cpp_cases

SOURCE_SUFFIXES = (
    ".c", ".cc", ".cpp", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx", ".h++",
    ".ipp", ".inl", ".tpp", ".cu", ".cuh",
)  # fmt: skip

PROFILE = TaskProfile(
    language=Language.CPP,
    aliases=("c++", "cxx"),
    source_suffixes=SOURCE_SUFFIXES,
    manifests=("CMakeLists.txt",),
    manifest_suffixes=(".cmake",),
    grammar=tree_sitter_cpp.language,
    test_suffixes=(".cpp", ".cc", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h"),
    find_cases=cpp_cases,
)
