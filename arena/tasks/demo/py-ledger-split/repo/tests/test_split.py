import pytest

from ledger import split_by_weights, split_evenly


def test_split_evenly_exact():
    assert split_evenly(900, 3) == [300, 300, 300]


def test_split_by_weights_exact():
    assert split_by_weights(1000, [1, 1, 2]) == [250, 250, 500]


def test_split_rejects_nobody():
    with pytest.raises(ValueError):
        split_evenly(100, 0)
