from textkit import slugify


def test_slugify_lowercases_words():
    assert slugify("Hello World") == "hello-world"


def test_slugify_drops_accents():
    assert slugify("Crème Brûlée") == "creme-brulee"


def test_slugify_custom_separator():
    assert slugify("a b", separator="_") == "a_b"
