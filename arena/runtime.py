"""Building the long-lived parts (CI service, workspaces, arena) from settings, once."""

from __future__ import annotations

from dataclasses import dataclass

from arena.ci import TaskCI
from arena.match import Arena
from ci_runner import CIRunner, CISettings
from ci_runner.images import ImageBuilder
from ci_runner.workspace import Workspaces


@dataclass(frozen=True)
class Runtime:
    settings: CISettings
    workspaces: Workspaces
    ci: TaskCI
    arena: Arena


def build_runtime(settings: CISettings) -> Runtime:
    runner = CIRunner(settings)
    workspaces = Workspaces.from_settings(settings)
    ci = TaskCI(
        runner,
        ImageBuilder(runner.client, settings),
        settings.cache_dir / "ci-results",
        settings.limits,
    )
    arena = Arena(
        ci, workspaces, settings.cache_dir / "retrieval", max_legs_tried=settings.max_legs_tried
    )
    return Runtime(settings, workspaces, ci, arena)
