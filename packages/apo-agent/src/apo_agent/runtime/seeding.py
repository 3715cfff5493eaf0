"""Where every random number of a run comes from: ``TrainConfig.seed``, through this module.

`seed_everything` is the one seeding block (Python's `random`, torch on every device, and
the NumPy generator that draws Stage 2's goals). A run calls it when it starts, and again
with a seed derived here at the start of each part whose result can come from a cache
(pi_ref's warm start, its test evaluation, Stage 1, Stage 2): a part then samples the same
whether the parts before it ran or were read back.

Env seeds are derived per episode, so an episode plays the same in any batch:

>>> reference_episode_seed(0, goal_index=3, sample=1), evaluation_seed(0, goal_index=3)
(3028, 3)
>>> demonstration_seed(1, goal_index=3), stage_two_seed(1)
(7922, 2)
"""

from __future__ import annotations

import random

import numpy as np
import torch


def seed_everything(seed: int) -> np.random.Generator:
    """Seeds Python's `random` and torch (CPU and every GPU) with ``seed``; returns a NumPy
    generator seeded with it."""
    random.seed(seed)
    torch.manual_seed(seed)
    return np.random.default_rng(seed)


def stage_two_seed(seed: int) -> int:
    """torch's seed at the start of Stage 2 (after Stage 1 sampled, or was read from its cache)."""
    return seed + 1


def reference_episode_seed(seed: int, goal_index: int, sample: int) -> int:
    """The env seed of Stage 1 reference episode ``sample`` of a goal."""
    return (seed * 1_000_003 + goal_index * 1_009 + sample) % (2**31)


def evaluation_seed(seed: int, goal_index: int) -> int:
    """The env seed of a goal's evaluation episode."""
    return (seed * 10_007 + goal_index) % (2**31)


def demonstration_seed(seed: int, goal_index: int) -> int:
    """The env seed of a goal's warm-start demonstration (``seed`` also seeds the demonstrator)."""
    return seed * 7919 + goal_index


def variant_demonstration_seed(seed: int) -> int:
    """The demonstrations of option variants: the seed of `demonstration_seed` and their demonstrator."""
    return seed + 1
