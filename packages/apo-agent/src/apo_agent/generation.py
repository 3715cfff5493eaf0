"""Moved to `apo_agent.engines.transformers`; this module keeps the old import path."""

from __future__ import annotations

from apo_agent.engines.base import Sample
from apo_agent.engines.transformers import sample_batch

__all__ = ["Sample", "sample_batch"]
