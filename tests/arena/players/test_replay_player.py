"""The replay player answers from recorded answers, keyed by task and role."""

import json
from pathlib import Path

import pytest

from arena.players.base import TaskContext
from arena.players.replay import ReplayError, ReplayPlayer
from tests.arena.tiny import TINY_TASK

TASK = TINY_TASK
CTX = TaskContext(TASK, "", {"calc.py": "x = 1\n"}.get)


def test_recorded_answers_are_replayed_per_role(tmp_path: Path) -> None:
    recordings = tmp_path / "answers.jsonl"
    patch = "calc.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n"
    recordings.write_text(
        json.dumps({"task": "calc-1", "role": "submitter", "answer": patch})
        + "\n"
        + json.dumps({"task": "calc-1", "role": "reviewer", "answer": "no idea"})
        + "\n"
    )
    player = ReplayPlayer("recorded", recordings)
    answer = player.propose_patch(CTX)
    assert answer.diff is not None and "+x = 2" in answer.diff and answer.raw_text == patch
    tests = player.propose_tests(CTX, answer.diff)
    assert tests.diff is None and tests.parse_error is not None
    other = CTX.__class__(TASK.model_copy(update={"instance_id": "other"}), "", CTX.read_file)
    assert player.propose_patch(other).error == "no recorded submitter answer for other"


def test_malformed_recordings_name_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"task": "a", "role": "submitter", "answer": "x"}\n{"task": "a", "role": "judge"}\n'
    )
    with pytest.raises(ReplayError, match="line 2"):
        ReplayPlayer("r", bad)
