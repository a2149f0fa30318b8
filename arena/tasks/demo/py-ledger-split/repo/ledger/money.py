"""Parsing user-typed amounts into integer cents."""

import re

_AMOUNT = re.compile(r"^\s*(?P<sign>-)?(?P<units>\d+)(?:[.,](?P<cents>\d{1,2}))?\s*$")


def parse_amount(text: str) -> int:
    """'12.5' -> 1250, '-3,07' -> -307; anything else is a ValueError."""
    match = _AMOUNT.match(text)
    if match is None:
        raise ValueError(f"not an amount: {text!r}")
    cents = int(match["units"]) * 100 + int((match["cents"] or "0").ljust(2, "0"))
    return -cents if match["sign"] else cents
