"""Dataset lines that cannot make a task, refused before anything is fetched, in categories.

SwingArena files some repos under the language GitHub shows for the repo, not the patch's:
such a line runs as the language its gold tests and patch are in (`with_language`), or is
refused naming that language when Arena does not run it. A line whose gold patch and tests
touch no source file of any language is refused (`no_code_problem`), as mislabelled when its
repository is written in another language. A line whose
fields contradict each other (an instance id naming another repo, a gold test patch equal to
the gold patch) is inconsistent. A missing or unreadable gold patch is validation's to report.
The language's files are its sources and its build manifests (`go.mod`, `Cargo.toml`,
`CMakeLists.txt`), as its profile (`arena.languages`) lists them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from arena.languages import language_named, profiles, task_profile
from arena.languages.others import unsupported_language_of
from arena.tasks.schema import Language, Task, UnsupportedTask
from ci_runner import github_slug

LANGUAGE_MISLABELLED = "language mislabelled"
LANGUAGE_NOT_SUPPORTED = "language not supported"
LINE_INCONSISTENT = "dataset line inconsistent"
NO_CODE_CHANGED = "gold patch changes no code"

_DIFF_PATH = re.compile(r"^(?:diff --git a/\S+ b/|\+\+\+ b/|--- a/)(\S+)", re.MULTILINE)
_INSTANCE = re.compile(r"^(?P<owner>.+?)__(?P<name>.+)-\d+$")
# folders of other projects' code kept in a repo: not what the repo is written in
_VENDORED = frozenset(
    {"vendor", "third_party", "third-party", "3rdparty", "node_modules", "external"}
)
# the filed language stands while the repo holds at least this share of its top language's files
_FILED_SHARE = 0.25


def patch_paths(diff: str) -> set[str]:
    return set(_DIFF_PATH.findall(diff))


def is_language_file(path: str, language: Language) -> bool:
    """A source or build file of the language, by its profile."""
    return task_profile(language).is_language_file(path)


def _languages(paths: set[str]) -> Counter[str]:
    """How many of `paths` are files of each language: the ones Arena runs by their
    profiles, the others (`arena.languages.others`) by their file endings."""
    found: Counter[str] = Counter()
    for path in paths:
        ours = [p.language.value for p in profiles() if p.is_language_file(path)]
        other = None if ours else unsupported_language_of(path)
        if ours or other:
            found[ours[0] if ours else str(other)] += 1
    return found


def with_language(task: Task) -> Task:
    """The task in the language its gold patch and tests are written in.

    SwingArena files a line under the language GitHub shows for its repo, so a Python file
    holds Go, Rust and TypeScript repos. The filed language stands when the gold patch or
    the gold tests touch a file of it (a Python project whose fix is in data files its
    Python tests read is Python). Else the tests' language decides, then the patch's: one
    Arena runs makes the task that language (`filed_language` keeps the dataset's); one it
    does not is refused by name. A line whose patches touch no source of any language is
    left to `no_code_problem`."""
    tests = _languages(patch_paths(task.test_patch))
    fixes = _languages(patch_paths(task.patch))
    filed = task.language.value
    if filed in tests or filed in fixes:
        return task
    found = tests or fixes
    if not found:
        return task
    real = found.most_common(1)[0][0]
    language = language_named(real)
    if language is None:
        where = "gold tests are" if tests else "gold patch is"
        raise UnsupportedTask(
            f"language: the {where} in {real}, not {filed} (filed as {filed})",
            f"{LANGUAGE_NOT_SUPPORTED}: {real}",
        )
    return task.model_copy(update={"language": language, "filed_language": filed})


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
    return None


def touches_no_source(task: Task) -> bool:
    """The gold patch and tests touch no source file of the task's language (after
    `with_language`: of any language), so only the repo can tell what the line is."""
    paths = patch_paths(task.patch)  # none: validation says what is wrong with the patch
    checked = paths | patch_paths(task.test_patch)
    return bool(paths) and not any(is_language_file(p, task.language) for p in checked)


def no_code_problem(task: Task, repo_files: Iterable[str] | None) -> UnsupportedTask | None:
    """Why a line whose gold patch and tests touch no source file of any language cannot make
    a task, or None when they touch one; `repo_files` is the repo's tree at the base commit
    (None when it was not fetched).

    Such a fix (a changelog, a `.patch` file of another project, an install script) with no
    gold test is one no test of the repo can tell from no fix at all, whatever the language.
    The repo's own files (vendored folders aside) say whose mistake it is: a repo written
    in another language than the filed one is a mislabelled line; one written in the filed
    language is a line whose fix changes no code."""
    if not touches_no_source(task):
        return None
    filed = task.language.value
    own = [p for p in repo_files or () if not _VENDORED & set(p.split("/")[:-1])]
    counts = _languages(set(own))
    shown = ", ".join(sorted(patch_paths(task.patch))[:5])
    top, most = counts.most_common(1)[0] if counts else (None, 0)
    if top is not None and counts[filed] < _FILED_SHARE * most:
        return UnsupportedTask(
            f"language: the gold patch touches no source file ({shown}) and the repo is "
            f"written in {top} ({most} files), not {filed}",
            LANGUAGE_MISLABELLED,
        )
    written = (
        "" if repo_files is None else f"; the repo is written in {top or 'no language Arena knows'}"
    )
    return UnsupportedTask(
        f"patch: the gold patch touches no source file of any language ({shown}) and no gold "
        f"test checks it{written}",
        NO_CODE_CHANGED,
    )
