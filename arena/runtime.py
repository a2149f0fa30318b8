"""Building the long-lived parts (CI service, workspaces, arena) from settings, once."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

from arena.ci import DirectoryCache, ResultCache, TaskCI
from arena.match import Arena
from arena.store.ci_runs import StoredResults
from arena.store.pool import Pool
from arena.vocabulary import CONTEXT_BUDGET_TOKENS
from ci_runner import CIRunner, CISettings, ImageBuilder, Workspaces


@dataclass(frozen=True)
class Runtime:
    settings: CISettings
    workspaces: Workspaces
    ci: TaskCI
    arena: Arena


def build_ci(settings: CISettings, pool: Pool | None = None) -> TaskCI:
    """The CI service of both drivers, with the settings' limits (ARENA_LIMITS): results kept
    in the cache directory (the command line) or, given a pool, in the store (the service).
    Both run many CI runs of the same images, so each run's sandbox is started ahead."""
    runner = CIRunner(settings, spares=True)
    images = ImageBuilder(runner.provider, settings)
    results: ResultCache = (
        DirectoryCache(settings.cache_dir / "ci-results") if pool is None else StoredResults(pool)
    )
    return TaskCI(runner, images, results, settings.limits)


def make_arena(
    ci: TaskCI,
    workspaces: Workspaces,
    settings: CISettings,
    context_budget_tokens: int = CONTEXT_BUDGET_TOKENS,
) -> Arena:
    """The arena of both drivers, from the one CI service and the settings of the process:
    every setting it takes is passed here, and only here."""
    return Arena(
        ci,
        workspaces,
        settings.cache_dir / "retrieval",
        context_budget_tokens=context_budget_tokens,
        max_legs_tried=settings.max_legs_tried,
    )


@contextlib.contextmanager
def open_runtime(settings: CISettings) -> Iterator[Runtime]:
    """The runtime of one command: its spare sandboxes go when the command ends, not when the
    process does, so a command run inside a longer-lived process (the tests, a notebook)
    leaves no container up behind it."""
    workspaces = Workspaces.from_settings(settings)
    ci = build_ci(settings)
    arena = make_arena(ci, workspaces, settings)
    try:
        yield Runtime(settings, workspaces, ci, arena)
    finally:
        ci.close()
