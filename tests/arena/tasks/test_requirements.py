"""What a gold patch adds to a Python project's dependencies, read from its diff."""

from __future__ import annotations

from arena.languages.python import added_requirements

PYPROJECT = """diff --git a/pyproject.toml b/pyproject.toml
index 753fe56..47193ca 100644
--- a/pyproject.toml
+++ b/pyproject.toml
@@ -40,6 +40,8 @@ Changelog = "https://example.org"
 [project.optional-dependencies]
 tests = [
     "factory-boy",
+    "time-machine",
+    "freezegun>=1.2; python_version<'3.12'",
 ]
@@ -60,3 +62,4 @@
 [tool.pytest.ini_options]
+testpaths = ["tests"]
"""

OTHERS = """diff --git a/requirements/test.txt b/requirements/test.txt
--- a/requirements/test.txt
+++ b/requirements/test.txt
@@ -1,2 +1,4 @@
 pytest
+hypothesis==6.98.0  # property tests
+-r base.txt
diff --git a/tox.ini b/tox.ini
--- a/tox.ini
+++ b/tox.ini
@@ -3,4 +3,6 @@ envlist = py311
 [testenv]
 deps =
+    responses
+commands = pytest
diff --git a/pyproject.toml b/pyproject.toml
--- a/pyproject.toml
+++ b/pyproject.toml
@@ -9,2 +9,4 @@
 [tool.poetry.group.tests.dependencies]
+respx = "^0.20"
+python = "^3.9"
"""


def test_added_dependencies_are_read_from_their_sections_only() -> None:
    assert added_requirements(PYPROJECT) == (
        "time-machine",
        'freezegun>=1.2; python_version < "3.12"',
    )


def test_requirement_files_tox_deps_and_poetry_groups() -> None:
    assert added_requirements(OTHERS) == ("hypothesis==6.98.0", "responses", "respx")


def test_a_code_only_patch_adds_nothing() -> None:
    diff = "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 'pytest'\n"
    assert added_requirements(diff) == ()
