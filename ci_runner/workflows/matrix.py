"""`strategy.matrix` expanded into its legs, with `include` and `exclude`, as GitHub does."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

from ci_runner.workflows.expressions import (
    ExpressionError,
    Unsupported,
    evaluate,
    interpolate,
    to_text,
)

Combination = dict[str, Any]
MAX_LEGS = 256  # GitHub's limit on the jobs one matrix makes


def _matches(combination: Combination, partial: Combination) -> bool:
    return all(key in combination and combination[key] == value for key, value in partial.items())


def _evaluated(value: Any, contexts: Mapping[str, Any]) -> Any:
    """A matrix value as GitHub expands it: a string that is one whole `${{ }}` is that
    expression's value (an array from `fromJSON`, an object); other strings holding one are
    interpolated; lists and mappings are evaluated item by item. Reading a context the
    derivation cannot know (another job's outputs through `needs`) raises Unsupported."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("${{") and text.endswith("}}") and text.count("${{") == 1:
            return evaluate(text[3:-2], contexts)
        return interpolate(value, contexts) if "${{" in value else value
    if isinstance(value, list):
        return [_evaluated(item, contexts) for item in value]
    if isinstance(value, dict):
        return {key: _evaluated(item, contexts) for key, item in value.items()}
    return value


def expand_matrix(strategy: Any, contexts: Mapping[str, Any] | None = None) -> list[Combination]:
    """The legs of a job's matrix in GitHub's order; `[{}]` for a job without one.

    Product of the axes (first axis outermost), minus every leg an `exclude` entry matches,
    then each `include` entry is added to every leg whose original values it does not
    overwrite, or becomes a leg of its own when it fits none. Expressions (a whole matrix,
    an axis or an entry computed with `fromJSON`, `inputs`, `github`) are evaluated in
    `contexts` first; without contexts they are Unsupported.
    """
    matrix = strategy.get("matrix") if isinstance(strategy, dict) else None
    if matrix is None:
        return [{}]
    shown = to_text(matrix).strip()
    if contexts is None:
        if "${{" in shown:
            raise Unsupported(f"a matrix computed by an expression ({shown})")
    else:
        try:
            matrix = _evaluated(matrix, contexts)
        except (Unsupported, ExpressionError) as exc:  # the leg is noted, never the import
            raise Unsupported(f"a matrix computed by an expression ({shown}): {exc}") from exc
    if not isinstance(matrix, dict):
        raise Unsupported(f"a matrix that is not a mapping ({to_text(matrix)})")
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
