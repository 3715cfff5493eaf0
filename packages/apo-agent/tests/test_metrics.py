"""The moving average that smooths the learning curves."""

import pytest

from apo_agent.runtime.metrics import moving_average


def test_moving_average_averages_each_value_with_those_before_it():
    assert moving_average([0.0, 1.0, 2.0, 6.0], 2) == [0.0, 0.5, 1.5, 4.0]
    assert moving_average([0.0, 3.0, 6.0], 3) == [0.0, 1.5, 3.0]  # shorter windows at the start
    assert moving_average([4.0, 1.0], 1) == [4.0, 1.0]
    assert moving_average([], 5) == []


def test_moving_average_rejects_an_empty_window():
    with pytest.raises(ValueError, match="window must be at least 1"):
        moving_average([1.0], 0)
