import pytest

from ledger import format_cents, parse_amount


@pytest.mark.parametrize(("text", "cents"), [("12", 1200), ("12.5", 1250), ("-3,07", -307), (" 0.99 ", 99)])
def test_parse_amount(text, cents):
    assert parse_amount(text) == cents


def test_parse_amount_rejects_words():
    with pytest.raises(ValueError):
        parse_amount("twelve")


def test_format_cents():
    assert format_cents(-307) == "-3.07 EUR"
