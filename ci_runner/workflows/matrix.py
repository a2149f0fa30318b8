"""`strategy.matrix` expanded into its legs, with `include` and `exclude`, as GitHub does."""

from __future__ import annotations

import itertools
import math
from typing import Any

from ci_runner.workflows.expressions import Unsupported, to_text

Combination = dict[str, Any]
MAX_LEGS = 256  # GitHub's limit on the jobs one matrix makes


def _matches(combination: Combination, partial: Combination) -> bool:
    return all(key in combination and combination[key] == value for key, value in partial.items())


def expand_matrix(strategy: Any) -> list[Combination]:
    """The legs of a job's matrix in GitHub's order; `[{}]` for a job without one.

    Product of the axes (first axis outermost), minus every leg an `exclude` entry matches,
    then each `include` entry is added to every leg whose original values it does not
    overwrite, or becomes a leg of its own when it fits none.
    """
    matrix = strategy.get("matrix") if isinstance(strategy, dict) else None
    if matrix is None:
        return [{}]
    if isinstance(matrix, str):
        raise Unsupported(f"a matrix computed by an expression ({matrix.strip()})")
    if not isinstance(matrix, dict):
        raise Unsupported(f"a matrix that is not a mapping ({type(matrix).__name__})")
    axes = {k: v for k, v in matrix.items() if k not in ("include", "exclude")}
    for key, values in axes.items():
        if not isinstance(values, list):
            raise Unsupported(f"matrix axis {key!r} is not a list ({to_text(values)})")
    legs = math.prod(len(values) for values in axes.values()) if axes else 0
    if legs > MAX_LEGS:
        raise Unsupported(f"a matrix of {legs} legs (GitHub allows {MAX_LEGS})")
    combinations: list[Combination] = (
        [dict(zip(axes, values, strict=True)) for values in itertools.product(*axes.values())]
        if axes
        else []
    )
    excludes = _entries(matrix.get("exclude"), "exclude")
    combinations = [c for c in combinations if not any(_matches(c, e) for e in excludes)]
    originals = [dict(c) for c in combinations]
    extra: list[Combination] = []  # legs made by `include` are never merged into
    for entry in _entries(matrix.get("include"), "include"):
        added = False
        for combination, original in zip(combinations, originals, strict=True):
            if all(original[k] == v for k, v in entry.items() if k in original):
                combination.update(entry)
                added = True
        if not added:
            extra.append(dict(entry))
    return combinations + extra or [{}]


def _entries(value: Any, what: str) -> list[Combination]:
    if value is None:
        return []
    if isinstance(value, str):
        raise Unsupported(f"matrix {what} computed by an expression ({value.strip()})")
    if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):
        raise Unsupported(f"matrix {what} that is not a list of mappings")
    return [dict(e) for e in value]


def leg_values_text(combination: Combination) -> str:
    """The `(v1, v2, ...)` GitHub appends to a matrix leg's name; mappings show their values."""
    parts: list[str] = []
    for value in combination.values():
        if isinstance(value, dict):
            parts.extend(to_text(v) for v in value.values() if not isinstance(v, dict))
        elif not isinstance(value, list):
            parts.append(to_text(value))
    return ", ".join(parts)
