"""The envs a run plays in: which webshop-gym id with which arguments, and which goals of a split.

Example:
    >>> from apo_agent.config import EnvConfig
    >>> spec = env_spec(EnvConfig(max_steps=5))
    >>> spec.describe()
    {'env_id': 'WebShop-Mini-Text-v0', 'goals': 'human', 'reward': 'original', 'max_steps': 5}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym

import webshop_gym  # noqa: F401  (registers the env ids)
from apo_agent.config import EnvConfig


@dataclass(frozen=True)
class EnvSpec:
    """How to make the envs: an id and the keyword arguments for ``gym.make``."""

    env_id: str
    kwargs: dict[str, Any]

    def make(self, split: str) -> gym.Env:
        return gym.make(self.env_id, **{**self.kwargs, "split": split})

    def describe(self) -> dict[str, Any]:
        return {"env_id": self.env_id, **self.kwargs}


def env_spec(config: EnvConfig) -> EnvSpec:
    """The envs ``config`` describes (the split is chosen where they are made)."""
    kwargs: dict[str, Any] = dict(goals=config.goals, reward=config.reward, max_steps=config.max_steps)
    if config.reward == "shaped":
        kwargs["shaping_discount"] = config.shaping_discount
    if config.catalog is not None:
        kwargs["catalog"] = config.catalog
    return EnvSpec(config.env_id, kwargs)


def make_envs(spec: EnvSpec, split: str, count: int) -> list[gym.Env]:
    """``count`` envs of one split (they share the catalogue and search index in memory)."""
    return [spec.make(split) for _ in range(count)]


def split_goals(env: gym.Env, limit: int | None) -> list[int]:
    """The first ``limit`` goal indices of the env's split (indices within the split)."""
    count = len(env.unwrapped.goal_indices)  # type: ignore[attr-defined]
    return list(range(count if limit is None else min(limit, count)))
