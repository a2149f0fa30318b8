"""Python tasks: `.py` sources, pytest ids, requirements a gold patch adds."""

import tree_sitter_python

from arena.languages.profile import Language, TaskProfile
from arena.ownership.python import python_cases
from arena.tasks.requirements import added_requirements

PROFILE = TaskProfile(
    language=Language.PYTHON,
    aliases=("py",),
    source_suffixes=(".py", ".pyi", ".pyx", ".pxd"),
    manifests=(),
    manifest_suffixes=(),
    grammar=tree_sitter_python.language,
    test_suffixes=(".py",),
    find_cases=python_cases,
    added_requirements=added_requirements,
)
