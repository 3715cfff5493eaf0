"""benchmarks.intervals: bootstrap intervals of a mean."""

from __future__ import annotations

from benchmarks.intervals import interval, mean_interval


def test_the_interval_is_a_bootstrap_of_the_mean():
    low, high = interval([10.0, 20.0, 30.0, 40.0, 50.0])
    assert 10.0 <= low < 30.0 < high <= 50.0
    # Values that agree give a narrower interval; one value (or all equal) gives the value itself.
    close_low, close_high = interval([29.0, 30.0, 31.0, 30.0, 30.0])
    assert close_high - close_low < (high - low) / 5
    assert interval([7.0]) == (7.0, 7.0) and interval([3.0, 3.0]) == (3.0, 3.0)
    assert mean_interval([20.0, 22.0]) == "21.0 [20.0, 22.0]"
    assert mean_interval([20.0]) == "20.0"


def test_half_successes_over_100_goals_give_about_ten_points_either_side():
    low, high = interval([0.0] * 50 + [100.0] * 50)
    assert 38 < low < 42 and 58 < high < 62
