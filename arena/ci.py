"""Running a task's pipeline on a list of diffs, with finished results cached by content.

A CI run is a pure function of (repo, commit, pipeline, image id, limits, diffs), so a result
once finished is never recomputed: validation, rounds and reruns share it. A timeout is re-run
once before it counts (load can cause one) and is never cached; infrastructure faults (a
sandbox stopped from outside, or by no one the engine can name) raise SandboxError and are
never cached. The rule lives here once; where results are kept is a ResultCache: a
directory (DirectoryCache, the command line) or the store's table (arena.store.ci_runs).
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import ci_runner
from arena.languages import task_profile
from arena.tasks.schema import Task
from ci_runner import CIRequest, CIResult, CIStatus, Limits

if TYPE_CHECKING:
    from ci_runner import CIRunner, EnvironmentSpec, ImageBuilder


def run_key(request: CIRequest, image_id: str, replica: int, round_key: int | None = None) -> str:
    """The content hash of a run: repo, commit, pipeline, image id, limits, diffs, replica,
    and the round it belongs to when it is a round's (`round_key`).

    Keyed by the image's id, not its name: a rebuilt image under the same tag recomputes;
    and by `ci_runner.RESULT_RULES`, so a result read by older rules (test ids, forged
    reports, tripwires) is not reused. A round's runs are its own: two rounds given the
    same answers (a replayed or deterministic model) would otherwise share every run, and a
    flaky test's one lucky draw on a second run would decide every such round
    (swing-protocol.md: no run is reused as another's second run); the same round judged
    again keys alike and reads its runs."""
    dumped = request.model_dump(mode="json")
    if request.twin_seed is None:  # a run without twins keys as it did before twins existed
        dumped.pop("twin_seed", None)
        if not request.unseen_tests:
            dumped.pop("unseen_tests", None)
    keyed = {
        "request": dumped,
        "image_id": image_id,
        "replica": replica,
        "rules": ci_runner.RESULT_RULES,
    }
    if round_key is not None:  # other runs (validation, the reference run) key as before
        keyed["round"] = round_key
    return hashlib.sha256(json.dumps(keyed, sort_keys=True).encode()).hexdigest()


def cacheable(result: CIResult) -> bool:
    """Whether a finished run may be kept: not a timeout, nor a step stopped by anything
    but the sandbox's own processes (those raise before a result exists; never kept)."""
    outside = any(s.stopped_by is not None and s.stopped_by.is_infrastructure for s in result.steps)
    return result.status is not CIStatus.TIMEOUT and not outside


def environment_spec(task: Task) -> EnvironmentSpec:
    # imported here: the command line reads tasks without loading the Docker client
    from ci_runner import EnvironmentSpec

    profile = task_profile(task.language)
    return EnvironmentSpec(
        repo=task.repo,
        commit=task.base_commit,
        language=task.language.value,
        pipeline=task.require_pipeline(),
        toolchain_request=task.toolchain_request,
        as_of=task.created_at,
        extra_requirements=added(task.patch) if (added := profile.added_requirements) else (),
    )


@dataclass(frozen=True)
class Twins:
    """Twins to plant in a run (ci_runner.languages.twins): of the tests in the diffs at
    indexes `of` (those the code under test has never seen), chosen by `seed`, which gives
    the same twins on the same tests in every run that names it. Without a seed no twin is
    planted, and the tests of `of` are still the unseen ones: a pipeline whose tripwires run
    apart runs them there too (ci_runner.tripwires.apart)."""

    seed: int | None
    of: frozenset[int]


def unseen_in(index: int) -> Twins:
    """No twins, the tests of the diff at `index` unseen."""
    return Twins(seed=None, of=frozenset({index}))


class ResultCache(Protocol):
    """Where finished CI results are kept, by run key: a directory, or the store's table.

    What is kept, and when, is TaskCI's rule; a cache only stores, finds and forgets."""

    def load(self, key: str) -> CIResult | None: ...

    def keep(self, key: str, request: CIRequest, result: CIResult) -> None: ...

    def drop(self, key: str) -> None: ...


class DirectoryCache:
    """Results as JSON files under a directory, one per key (the command line's cache)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def load(self, key: str) -> CIResult | None:
        path = self._path(key)
        return CIResult.model_validate_json(path.read_text()) if path.is_file() else None

    def keep(self, key: str, request: CIRequest, result: CIResult) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{threading.get_ident()}.tmp")
        tmp.write_text(result.model_dump_json())
        tmp.replace(path)

    def drop(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)


class TaskCI:
    def __init__(
        self,
        runner: CIRunner,
        images: ImageBuilder,
        results: ResultCache | Path | None,
        limits: Limits | None = None,
    ) -> None:
        """`results`: where finished runs are kept (a path: a DirectoryCache there; None:
        nowhere, every run runs)."""
        from ci_runner import EnvironmentBuilder

        self._runner = runner
        self._images = images
        self._environments = EnvironmentBuilder(images)
        self._results = DirectoryCache(results) if isinstance(results, Path) else results
        self._limits = limits or Limits()
        self._image_tags: dict[str, str] = {}
        self._lock = threading.Lock()

    def close(self) -> None:
        """Remove the sandboxes the runner started ahead for runs that will not come."""
        self._runner.close()

    def base_files(self, task: Task) -> list[str]:
        """Every file of the task's repository at its base commit."""
        return self._runner.workspaces.list_files(task.repo, task.base_commit)

    def read_base(self, task: Task, path: str) -> str | None:
        """A file's text at the task's base commit; None if absent or binary."""
        return self._runner.workspaces.read_text(task.repo, task.base_commit, path)

    def image_for(self, task: Task) -> str:
        """The task's own image, its environment image when it has setup steps, or the
        language's toolchain image."""
        if task.image:
            return task.image
        spec = environment_spec(task)
        if self._environments.needs_build(spec):
            return self._environments.ensure(spec)
        with self._lock:
            language = task.language.value
            if language not in self._image_tags:
                self._image_tags[language] = self._images.ensure(language)
            return self._image_tags[language]

    def deviation(self, task: Task) -> str | None:
        """How the task's toolchain differs from what its job asks, in one line, or None."""
        if task.image or task.pipeline is None:
            return None
        return self._environments.toolchain_for(environment_spec(task)).deviation

    def request_for(
        self,
        task: Task,
        diffs: tuple[str, ...],
        twins: Twins | None = None,
    ) -> CIRequest:
        """Empty diffs (a task without gold tests) are left out rather than refused."""
        kept = [(n, d) for n, d in enumerate(diffs) if d.strip()]
        unseen = tuple(i for i, (n, _) in enumerate(kept) if twins and n in twins.of)
        return CIRequest(
            repo=task.repo,
            commit=task.base_commit,
            pipeline=task.require_pipeline(),
            image=self.image_for(task),
            diffs=tuple(d for _, d in kept),
            limits=self._limits,
            unseen_tests=unseen,
            twin_seed=twins.seed if twins and unseen else None,
        )

    def run(
        self,
        task: Task,
        diffs: tuple[str, ...],
        replica: int = 0,
        twins: Twins | None = None,
        round_key: int | None = None,
    ) -> CIResult:
        """`replica` numbers independent runs of the same tree (validation runs each twice);
        `twins` says which diffs hold tests the code has never seen, to plant twins of;
        `round_key` names the round a run belongs to (`run_key`).

        Raises SandboxError for an infrastructure fault, before anything is kept."""
        request = self.request_for(task, diffs, twins)
        key = None
        if self._results is not None:
            key = run_key(request, self._images.image_id(request.image), replica, round_key)
            kept = self._results.load(key)
            if kept is not None:
                return kept
        result = self._runner.run(request)
        if result.status is CIStatus.TIMEOUT:
            result = self._runner.run(request)
        if key is not None and self._results is not None and cacheable(result):
            self._results.keep(key, request, result)
        return result

    def forget(self, task: Task, diffs: tuple[str, ...], replica: int = 0) -> None:
        """Drop a kept result the engine found wrong (a failed reference run): the next run
        of the same tree runs again."""
        if self._results is not None:
            request = self.request_for(task, diffs)
            self._results.drop(run_key(request, self._images.image_id(request.image), replica))
