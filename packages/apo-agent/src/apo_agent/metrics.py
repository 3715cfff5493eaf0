"""Moved to `apo_agent.runtime.metrics`; this module keeps the old import path."""

from __future__ import annotations

from apo_agent.runtime.metrics import (
    COLUMNS,
    MetricsLogger,
    moving_average,
    plot_learning_curve,
    read_metrics,
)

__all__ = ["COLUMNS", "MetricsLogger", "moving_average", "plot_learning_curve", "read_metrics"]
