"""Moved to `apo_agent.runtime.seeding`; this module keeps the old import path."""

from __future__ import annotations

from apo_agent.runtime.seeding import (
    demonstration_seed,
    evaluation_seed,
    reference_episode_seed,
    seed_everything,
    stage_two_seed,
    variant_demonstration_seed,
)

__all__ = [
    "demonstration_seed",
    "evaluation_seed",
    "reference_episode_seed",
    "seed_everything",
    "stage_two_seed",
    "variant_demonstration_seed",
]
