"""Moved to `apo_agent.runtime.checkpoints`; this module keeps the old import path."""

from __future__ import annotations

from apo_agent.runtime.checkpoints import (
    checkpoint_dir,
    latest_checkpoint,
    load_checkpoint,
    load_weights,
    restore_rng_state,
    rng_state,
    save_checkpoint,
)

__all__ = [
    "checkpoint_dir",
    "latest_checkpoint",
    "load_checkpoint",
    "load_weights",
    "restore_rng_state",
    "rng_state",
    "save_checkpoint",
]
