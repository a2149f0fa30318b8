"""A worker process prepares each task once, and preparing one task holds up no other."""

from __future__ import annotations

import threading
from typing import Any

import pytest

import workers.services as services_module
from arena.scrub import KnownSecrets
from arena.store.settings import ServiceSettings
from workers.services import Services


class SlowArena:
    """Prepares task 1 only when told to; counts every call."""

    def __init__(self) -> None:
        self.release_first = threading.Event()
        self.calls: list[int] = []
        self._lock = threading.Lock()

    def prepare(self, task_id: int) -> str:
        with self._lock:
            self.calls.append(task_id)
        if task_id == 1:
            assert self.release_first.wait(timeout=30)
        return f"prepared {task_id}"


@pytest.fixture
def slow(monkeypatch: pytest.MonkeyPatch) -> tuple[Services, SlowArena]:
    monkeypatch.setattr(services_module, "load_task", lambda pool, task_id: task_id)
    found = Services(settings=ServiceSettings(), pool=None, redis=None, slots=None, secrets=KnownSecrets())  # type: ignore[arg-type]  # fmt: skip
    arena = SlowArena()
    found.__dict__["arena"] = arena  # the cached property, without an engine
    return found, arena


def test_preparing_one_task_holds_up_no_other_and_each_is_prepared_once(
    slow: tuple[Services, SlowArena],
) -> None:
    s, arena = slow
    results: list[Any] = []
    first = [threading.Thread(target=lambda: results.append(s.prepared(1))) for _ in range(3)]
    for thread in first:
        thread.start()
    assert s.prepared(2) == "prepared 2"  # while task 1 is still being prepared
    assert all(thread.is_alive() for thread in first)
    arena.release_first.set()
    for thread in first:
        thread.join(timeout=30)
    assert results == ["prepared 1"] * 3
    assert sorted(arena.calls) == [1, 2]  # three steps asked for task 1: prepared once
    assert s.prepared(1) == "prepared 1" and sorted(arena.calls) == [1, 2]


def test_every_arena_a_worker_builds_tries_as_many_legs_as_the_setting_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ARENA_MAX_LEGS_TRIED", "5")
    found = Services(settings=ServiceSettings(), pool=None, redis=None, slots=None, secrets=KnownSecrets())  # type: ignore[arg-type]  # fmt: skip
    found.__dict__["ci"] = None  # the cached property, without an engine
    assert found.arena.max_legs_tried == 5
    assert found._arena_for(1234).max_legs_tried == 5  # a tournament's own context budget
