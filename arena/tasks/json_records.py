"""JSON from task files, read without trusting its shape: a refusal with a reason, never a crash.

Python's reader recurses once per nesting level, so a line of 100,000 `[` raises
RecursionError, and a number of more than 4,300 digits raises a plain ValueError: both are
refused here like any text that is not JSON. Nesting is bounded well below the recursion
limit (the task schema nests seven levels at most), so nothing read here can make a later
step (validation, re-encoding, storage) recurse too deep.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64
NOT_JSON = "not JSON"
TOO_DEEP = "JSON nested too deep"  # an import reason: the dataset line is inconsistent


class JsonRecordError(ValueError):
    """The text is not JSON Arena reads; `reason` is what an import report counts it under."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def _too_deep() -> JsonRecordError:
    return JsonRecordError(f"JSON nested more than {MAX_DEPTH} levels deep", TOO_DEEP)


def load_json(text: str | bytes) -> Any:
    """The JSON value `text` holds; JsonRecordError if it is not JSON or nests too deep."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JsonRecordError(f"not JSON: {exc.msg}", NOT_JSON) from None
    except RecursionError:
        raise _too_deep() from None
    except ValueError as exc:  # an integer of more digits than Python converts, say
        detail = str(exc).split(";")[0]  # not the advice to raise Python's limit
        raise JsonRecordError(f"not JSON: {detail}", NOT_JSON) from None
    if depth_exceeds(value, MAX_DEPTH):
        raise _too_deep()
    return value


def depth_exceeds(value: Any, limit: int) -> bool:
    """Whether lists and objects in `value` nest deeper than `limit` (walked without recursion);
    a scalar is depth 0, `[]` and `{}` are depth 1."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth + 1 > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False
