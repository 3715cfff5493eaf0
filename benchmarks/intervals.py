"""95% bootstrap intervals of a mean: over seeds (training curves) or over goals (paired runs).

One method everywhere, scipy's percentile bootstrap with a fixed seed, so a record's
intervals are reproducible and comparable across tables.

Example:
    >>> interval([7.0, 7.0, 7.0])
    (7.0, 7.0)
    >>> mean_interval([42.0])
    '42.0'
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import numpy as np

CONFIDENCE = 0.95
RESAMPLES = 10_000


def interval(values: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """The 95% percentile-bootstrap interval of the mean of ``values`` (resampling the
    entries; one value or identical values: that value)."""
    array = np.asarray(values, dtype=float)
    if len(array) < 2 or np.all(array == array[0]):
        return float(array[0]), float(array[0])
    from scipy.stats import bootstrap  # scipy loads slowly; only interval tables need it

    result = bootstrap(
        (array,),
        np.mean,
        confidence_level=CONFIDENCE,
        n_resamples=RESAMPLES,
        method="percentile",
        random_state=0,
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def mean_interval(values: Sequence[float], digits: int = 1) -> str:
    """``"42.0 [40.0, 44.0]"``: the mean and its 95% interval (just the value for one)."""
    mean = statistics.fmean(values)
    if len(values) == 1:
        return f"{mean:.{digits}f}"
    low, high = interval(values)
    return f"{mean:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"
