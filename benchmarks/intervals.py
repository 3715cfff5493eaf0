"""95% intervals of a mean, all from scipy.stats: over seeds (training runs) or over goals.

Three methods, named in every table that uses them:

* ``"t"``, the Student-t interval: the one for means over a few seeds (a bootstrap over five
  values undercovers, since it cannot see spread the sample did not show);
* ``"bca"``, scipy's BCa bootstrap, offered from `BCA_MIN_SEEDS` values on;
* ``"percentile"``, the percentile bootstrap, the default of `interval` and `mean_interval` for
  their callers over 100 goals (`benchmarks.harness.paired`), where it is accurate.

Bootstraps use a fixed seed, so a record's intervals are reproducible. `ratio_interval`
summarises ratios (costs of one method over another's) by their geometric mean.

Example:
    >>> interval([7.0, 7.0, 7.0], "t")
    (7.0, 7.0)
    >>> mean_interval([42.0])
    '42.0'
    >>> mean_interval([1.0, 2.0, 3.0], method="t")  # 2 +- t(0.975, 2) * 1 / sqrt(3)
    '2.0 [-0.5, 4.5]'
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

import numpy as np

CONFIDENCE = 0.95
RESAMPLES = 10_000
BCA_MIN_SEEDS = 10
METHODS = {
    "t": "Student-t interval",
    "bca": "BCa bootstrap interval",
    "percentile": "percentile bootstrap interval",
}


def interval(values: Sequence[float] | np.ndarray, method: str = "percentile") -> tuple[float, float]:
    """The 95% interval of the mean of ``values`` by ``method`` (see `METHODS`); one value or
    identical values: that value. BCa needs `BCA_MIN_SEEDS` values, and is (nan, nan) where
    its jackknife degenerates (too few distinct values)."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
    array = np.asarray(values, dtype=float)
    if len(array) < 2 or np.all(array == array[0]):
        return float(array[0]), float(array[0])
    from scipy import stats  # scipy loads slowly; only interval tables need it

    if method == "t":
        low, high = stats.t.interval(
            CONFIDENCE, len(array) - 1, loc=float(np.mean(array)), scale=float(stats.sem(array))
        )
        return float(low), float(high)
    if method == "bca" and len(array) < BCA_MIN_SEEDS:
        raise ValueError(f"BCa needs at least {BCA_MIN_SEEDS} values, got {len(array)}; use 't'")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)  # reported as nan instead
        result = stats.bootstrap(
            (array,),
            np.mean,
            confidence_level=CONFIDENCE,
            n_resamples=RESAMPLES,
            method="BCa" if method == "bca" else "percentile",
            random_state=0,
        )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def mean_interval(values: Sequence[float], digits: int = 1, method: str = "percentile") -> str:
    """``"42.0 [40.0, 44.0]"``: the mean and its 95% interval (just the value for one)."""
    low, high = interval(values, method) if len(values) > 1 else (math.nan, math.nan)
    return interval_cell(statistics.fmean(values), low, high, len(values), digits)


def interval_cell(mean: float, low: float, high: float, count: int, digits: int = 1) -> str:
    """A table cell for a mean over ``count`` values and its interval: ``"42.0 [40.0, 44.0]"``,
    the mean alone for one value, ``[undefined]`` where the interval is (nan)."""
    if count == 1:
        return f"{mean:.{digits}f}"
    if math.isnan(low):
        return f"{mean:.{digits}f} [undefined]"
    return f"{mean:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def ratio_interval(ratios: Sequence[float], method: str = "t") -> tuple[float, float, float]:
    """The geometric mean of positive ``ratios`` and its 95% interval: the interval of the
    mean log ratio, exponentiated (ratios multiply, so their logs are what averages)."""
    logs = np.log(np.asarray(ratios, dtype=float))
    low, high = interval(logs, method)
    return math.exp(float(np.mean(logs))), math.exp(low), math.exp(high)
