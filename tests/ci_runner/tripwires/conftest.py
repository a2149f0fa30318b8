"""The demo tasks by short name (`py-textkit-slug`), for the real runs of the tripwires."""

from __future__ import annotations

import pytest

from arena.tasks.demo import demo_tasks
from arena.tasks.schema import Task
from ci_runner import CISettings


@pytest.fixture(scope="module")
def demo(ci_settings: CISettings) -> dict[str, Task]:
    return {
        t.instance_id.removeprefix("demo__"): t
        for t in demo_tasks(ci_settings.cache_dir / "demo-repos")
    }
