"""What a worker process shares between its steps: pool, Redis, engine, players, tasks."""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import redis

from arena.ci import TaskCI
from arena.match import Arena, PreparedTask, role_contexts
from arena.players.base import Player, Role, TaskContext
from arena.players.openai import OpenAIModel, OpenAIPlayer
from arena.players.registry import build_player, model_spec
from arena.runtime import build_ci, make_arena
from arena.scrub import KnownSecrets
from arena.store.matches import load_task
from arena.store.models import player_record
from arena.store.pool import Pool, open_pool
from arena.store.secrets import KeyBox, SecretKeyError
from arena.store.settings import ServiceSettings
from arena.vocabulary import CONTEXT_BUDGET_TOKENS
from ci_runner import CISettings
from ci_runner.workspace import Workspaces
from workers.slots import ModelSlots

T = TypeVar("T")


@dataclass
class Services:
    settings: ServiceSettings
    pool: Pool
    redis: redis.Redis
    slots: ModelSlots
    # the service's secrets and every model key this process has used: scrubbed from what an
    # endpoint sends back, from the errors a step stores, and from the logs
    secrets: KnownSecrets
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _players: dict[str, tuple[Player, int | None]] = field(default_factory=dict)
    _prepared: dict[tuple[int, int], PreparedTask] = field(default_factory=dict)
    _building: dict[tuple[int, int, int], threading.Lock] = field(default_factory=dict)
    _arenas: dict[int, Arena] = field(default_factory=dict)
    _contexts: dict[tuple[int, int], dict[Role, TaskContext]] = field(default_factory=dict)

    @functools.cached_property
    def ci_settings(self) -> CISettings:
        return CISettings()

    @functools.cached_property
    def workspaces(self) -> Workspaces:
        return Workspaces.from_settings(self.ci_settings)

    @functools.cached_property
    def ci(self) -> TaskCI:
        return build_ci(self.ci_settings, self.pool)

    @functools.cached_property
    def arena(self) -> Arena:
        return make_arena(self.ci, self.workspaces, self.ci_settings)

    def player(self, name: str) -> tuple[Player, int | None]:
        """The player and its concurrency limit across workers (None: unlimited)."""
        with self._lock:
            if name not in self._players:
                row = player_record(self.pool, name)
                spec = model_spec(name, row.spec)
                limit = spec.max_concurrency if isinstance(spec, OpenAIModel) else None
                models = {} if spec is None else {name: spec}
                player: Player
                cap = self.settings.max_answer_bytes
                if isinstance(spec, OpenAIModel) and row.api_key_enc is not None:
                    key = self._key_box().open(row.api_key_enc)
                    player = OpenAIPlayer(spec, key, max_answer_bytes=cap, secrets=self.secrets)
                else:  # a key from the environment: only a variable the rule allows
                    rule = self.settings.key_env_rule()
                    player = build_player(
                        name, models, os.environ, cap, key_env=rule, secrets=self.secrets
                    )
                self._players[name] = (player, limit)
            return self._players[name]

    def _key_box(self) -> KeyBox:
        """API keys registered through the API are stored encrypted under ARENA_SECRET_KEY."""
        secret = self.settings.secret_key
        if secret is None:
            raise SecretKeyError("a model has a stored API key but ARENA_SECRET_KEY is not set")
        return KeyBox(secret.get_secret_value())

    def _arena_for(self, budget: int) -> Arena:
        with self._lock:
            if budget not in self._arenas:
                self._arenas[budget] = (
                    self.arena
                    if budget == CONTEXT_BUDGET_TOKENS
                    else make_arena(self.ci, self.workspaces, self.ci_settings, budget)
                )
            return self._arenas[budget]

    def _once(
        self, cache: dict[tuple[int, int], T], key: tuple[int, int], build: Callable[[], T]
    ) -> T:
        """`build()` once per key in this process, under a lock of the key's own: building one
        task's value (a gold run in a sandbox, an index) must not hold up a step of another."""
        with self._lock:
            if key in cache:
                return cache[key]
            building = self._building.setdefault((id(cache), *key), threading.Lock())
        with building:
            with self._lock:
                if key in cache:
                    return cache[key]
            done = build()
            with self._lock:
                cache[key] = done
                self._building.pop((id(cache), *key), None)
            return done

    def prepared(self, task_id: int, budget: int = CONTEXT_BUDGET_TOKENS) -> PreparedTask:
        """Validation and the gold run come from the store; retrieval from the local cache,
        packed to the tournament's context budget (tokens)."""
        arena = self._arena_for(budget)
        return self._once(
            self._prepared, (task_id, budget), lambda: arena.prepare(load_task(self.pool, task_id))
        )

    def contexts(
        self, task_id: int, budget: int = CONTEXT_BUDGET_TOKENS
    ) -> dict[Role, TaskContext]:
        """What a model is shown: retrieval only, so an llm worker needs no Docker engine
        (the task was validated and its gold run stored before any match was scheduled)."""

        def build() -> dict[Role, TaskContext]:
            task = load_task(self.pool, task_id)
            cache = self.ci_settings.cache_dir / "retrieval"
            return role_contexts(task, self.workspaces, cache, budget)

        return self._once(self._contexts, (task_id, budget), build)


_services: dict[int, Services] = {}


def services() -> Services:
    """One per process (a forked pool child builds its own connections)."""
    pid = os.getpid()
    if pid not in _services:
        from workers.app import secrets, settings

        client = redis.Redis.from_url(settings.broker_url)
        _services[pid] = Services(
            settings=settings,
            pool=open_pool(settings.database_url, max_size=16),
            redis=client,
            slots=ModelSlots(client, settings.step_lease_s),
            secrets=secrets,
        )
    return _services[pid]
