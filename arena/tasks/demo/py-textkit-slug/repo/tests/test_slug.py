import pytest

from textkit import slugify


def test_slugify_lowercases_words():
    assert slugify("Hello World") == "hello-world"


def test_slugify_drops_accents():
    assert slugify("Crème Brûlée") == "creme-brulee"


def test_slugify_custom_separator():
    assert slugify("a b", separator="_") == "a_b"


def test_slugify_short_titles_are_not_cut():
    assert slugify("short", max_length=10) == "short"


def test_slugify_rejects_zero_length():
    with pytest.raises(ValueError):
        slugify("x", max_length=0)
