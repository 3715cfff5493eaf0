"""The envs a run plays in: Gymnasium's `EnvSpec` of the configured id with the run's arguments.

`env_spec` is the registered spec with the arguments `env_arguments` reads from the
config (goal source, reward, step limit, ...); the split is given where envs are made
(`make_envs`). `describe_envs` names them for the Stage 1 cache key (what
``EnvSpec.describe()`` of the spec class this module had gave, so cached runs still match).

Example:
    >>> from apo_agent.config import EnvConfig
    >>> spec = env_spec(EnvConfig(max_steps=5))
    >>> spec.id, spec.kwargs["max_steps"], spec.kwargs["observation_mode"]
    ('WebShop-Mini-Text-v0', 5, 'text')
    >>> describe_envs(EnvConfig(max_steps=5))
    {'env_id': 'WebShop-Mini-Text-v0', 'goals': 'human', 'reward': 'original', 'max_steps': 5}
"""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec

import webshop_gym  # noqa: F401  (registers the env ids)
from apo_agent.config import EnvConfig

__all__ = ["EnvSpec", "describe_envs", "env_arguments", "env_spec", "make_envs", "split_goals"]


def env_arguments(config: EnvConfig) -> dict[str, Any]:
    """The ``gym.make`` arguments a run adds to its registered env id (the split aside)."""
    kwargs: dict[str, Any] = dict(goals=config.goals, reward=config.reward, max_steps=config.max_steps)
    if config.reward == "shaped":
        kwargs["shaping_discount"] = config.shaping_discount
    if config.catalog is not None:
        kwargs["catalog"] = config.catalog
    return kwargs


def env_spec(config: EnvConfig) -> EnvSpec:
    """Gymnasium's spec of the envs ``config`` describes (the split is chosen where they are made)."""
    registered = gym.spec(config.env_id)
    return dataclasses.replace(registered, kwargs={**registered.kwargs, **env_arguments(config)})


def describe_envs(config: EnvConfig) -> dict[str, Any]:
    """The env id and the run's arguments, as the Stage 1 cache key names them."""
    return {"env_id": config.env_id, **env_arguments(config)}


def make_envs(spec: EnvSpec, split: str, count: int) -> list[gym.Env]:
    """``count`` envs of one split (they share the catalogue and search index in memory)."""
    return [gym.make(spec, split=split) for _ in range(count)]


def split_goals(env: gym.Env, limit: int | None) -> list[int]:
    """The first ``limit`` goal indices of the env's split (indices within the split)."""
    count = len(env.unwrapped.goal_indices)  # type: ignore[attr-defined]
    return list(range(count if limit is None else min(limit, count)))
