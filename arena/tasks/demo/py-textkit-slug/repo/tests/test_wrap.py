import pytest
from textkit import reading_time, wrap


def test_wrap_breaks_at_width():
    assert wrap("one two three four", width=9) == ["one two", "three", "four"]


def test_wrap_rejects_zero_width():
    with pytest.raises(ValueError):
        wrap("x", width=0)


def test_reading_time_rounds_up():
    assert reading_time("word " * 231) == 2
