"""Tasks: one real issue each, with its repo, base commit, gold fix and CI pipeline."""

from arena.tasks.schema import Language, Task, TaskError, load_task_file

__all__ = ["Language", "Task", "TaskError", "load_task_file"]
