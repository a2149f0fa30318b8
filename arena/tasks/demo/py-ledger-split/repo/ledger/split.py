"""Splitting an amount between people so that the parts add up to the whole."""


def split_evenly(total: int, people: int) -> list[int]:
    """Split `total` cents into `people` parts that differ by at most one cent."""
    if people < 1:
        raise ValueError("people must be at least 1")
    share = total // people
    return [share] * people


def split_by_weights(total: int, weights: list[int]) -> list[int]:
    """Split `total` cents in proportion to `weights` (for example nights stayed)."""
    if not weights or any(w < 0 for w in weights) or sum(weights) == 0:
        raise ValueError("weights must be non-negative and not all zero")
    whole = sum(weights)
    return [total * w // whole for w in weights]
