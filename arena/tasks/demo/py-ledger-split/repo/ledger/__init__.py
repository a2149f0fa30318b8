"""ledger: integer-cent money, parsing, splitting and formatting."""

from ledger.format import format_cents
from ledger.money import parse_amount
from ledger.split import split_evenly, split_by_weights

__all__ = ["format_cents", "parse_amount", "split_by_weights", "split_evenly"]
