"""Dataset lines that cannot make a task, refused before anything is fetched, in categories.

A line whose gold patch touches no file of its language was mislabelled (SwingArena files
some repos under the language GitHub shows for the repo, not the patch's): its tests, if any,
are not the language's, and its verdicts would not say what the board claims. A line whose
fields contradict each other (an instance id naming another repo, a gold test patch equal to
the gold patch) is inconsistent. A missing or unreadable gold patch is validation's to report.
The language's files are its sources and its build manifests (`go.mod`, `Cargo.toml`,
`CMakeLists.txt`), as its profile (`arena.languages`) lists them.
"""

from __future__ import annotations

import re

from arena.languages import task_profile
from arena.tasks.schema import Language, Task, UnsupportedTask
from ci_runner.git_mirrors import github_slug

LANGUAGE_MISLABELLED = "language mislabelled"
LINE_INCONSISTENT = "dataset line inconsistent"

_DIFF_PATH = re.compile(r"^(?:diff --git a/\S+ b/|\+\+\+ b/|--- a/)(\S+)", re.MULTILINE)
_INSTANCE = re.compile(r"^(?P<owner>.+?)__(?P<name>.+)-\d+$")


def patch_paths(diff: str) -> set[str]:
    return set(_DIFF_PATH.findall(diff))


def is_language_file(path: str, language: Language) -> bool:
    """A source or build file of the language, by its profile."""
    return task_profile(language).is_language_file(path)


def line_problem(task: Task) -> UnsupportedTask | None:
    """Why the line cannot make a task, or None."""
    if task.test_patch.strip() and task.test_patch.strip() == task.patch.strip():
        return UnsupportedTask("test_patch: equals the gold patch", LINE_INCONSISTENT)
    slug = github_slug(task.repo)
    named = _INSTANCE.match(task.instance_id)
    if slug is not None and named is not None and "/" in slug:
        owner, name = slug.split("/", 1)
        if (named["owner"].lower(), named["name"].lower()) != (owner.lower(), name.lower()):
            return UnsupportedTask(
                f"instance_id: {task.instance_id} names {named['owner']}/{named['name']}, "
                f"but repo is {slug}",
                LINE_INCONSISTENT,
            )
    paths = patch_paths(task.patch)  # none: validation says what is wrong with the patch
    if paths and not any(is_language_file(p, task.language) for p in paths):
        shown = ", ".join(sorted(paths)[:5])
        return UnsupportedTask(
            f"language: the gold patch touches no {task.language.value} file ({shown})",
            LANGUAGE_MISLABELLED,
        )
    return None
