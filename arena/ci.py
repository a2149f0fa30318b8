"""Running a task's pipeline on a list of diffs, with finished results cached by content.

A CI run is a pure function of (repo, commit, pipeline, image, diffs), so a result once
finished is never recomputed: validation, rounds and reruns share it. Timeouts are not
cached (load can cause them); infrastructure faults raise and are never cached.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

from arena.tasks.schema import Task
from ci_runner import CIRequest, CIResult, CIRunner, CIStatus
from ci_runner.images import ImageBuilder


class TaskCI:
    def __init__(self, runner: CIRunner, images: ImageBuilder, cache_dir: Path | None) -> None:
        self._runner = runner
        self._images = images
        self._cache_dir = cache_dir
        self._image_tags: dict[str, str] = {}
        self._lock = threading.Lock()

    def image_for(self, task: Task) -> str:
        if task.image:
            return task.image
        with self._lock:
            language = task.language.value
            if language not in self._image_tags:
                self._image_tags[language] = self._images.ensure(language)
            return self._image_tags[language]

    def request_for(self, task: Task, diffs: tuple[str, ...]) -> CIRequest:
        return CIRequest(
            repo=task.repo,
            commit=task.base_commit,
            pipeline=task.require_pipeline(),
            image=self.image_for(task),
            diffs=diffs,
        )

    def _cache_path(self, request: CIRequest) -> Path | None:
        if self._cache_dir is None:
            return None
        key = hashlib.sha256(
            json.dumps(request.model_dump(mode="json"), sort_keys=True).encode()
        ).hexdigest()
        return self._cache_dir / key[:2] / f"{key}.json"

    def run(self, task: Task, diffs: tuple[str, ...]) -> CIResult:
        request = self.request_for(task, diffs)
        path = self._cache_path(request)
        if path is not None and path.is_file():
            return CIResult.model_validate_json(path.read_text())
        result = self._runner.run(request)
        if path is not None and result.status is not CIStatus.TIMEOUT:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{threading.get_ident()}.tmp")
            tmp.write_text(result.model_dump_json())
            tmp.replace(path)
        return result
