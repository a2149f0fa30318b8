"""A minimal task for tests that need one but never run its pipeline."""

from arena.tasks.schema import Task

TINY_TASK = Task.model_validate(
    {
        "instance_id": "calc-1",
        "repo": "/nowhere",
        "base_commit": "abc1234" + "0" * 33,
        "language": "python",
        "problem_statement": "add() subtracts",
        "pipeline": {
            "steps": [{"name": "t", "run": "true"}],
            "report": {"format": "junit", "path": "r.xml"},
        },
    }
)
