"""Goals of one's own, numbered after a split's goals, set once on the envs.

Rollouts ask for goals by number (``reset(options={"goal_index": n})``). `with_goals` wraps
envs so that numbers from ``first`` on play goals given by content instead (webshop-gym's
``goal`` reset option: a `webshop_gym.Goal` over the catalogue, e.g. the option variants of
`apo_agent.warm_start.demonstrations.option_variant`). The envs are set up once; everything
that plays episodes on them (`apo_agent.rollout.episodes.collect_episodes`, Stage 1, Stage 2,
the warm start's demonstrations) sees only goal numbers.

Example:
    >>> import gymnasium as gym
    >>> import webshop_gym
    >>> env = gym.make("WebShop-Mini-Text-v0", split="train")
    >>> goal = env.unwrapped.goal_at(0)
    >>> (wrapped,) = with_goals([env], [goal], first=5)
    >>> _, info = wrapped.reset(seed=0, options={"goal_index": 5})  # number 5: the goal given
    >>> info["goal_index"] is None, info["instruction"] == goal.instruction_text
    (True, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym

from webshop_gym.data.model import Goal


class NumberedGoals(gym.Wrapper):
    """Plays goal number ``first + i`` as ``goals[i]``; smaller numbers are the split's goals."""

    def __init__(self, env: gym.Env, goals: Sequence[Goal], first: int) -> None:
        super().__init__(env)
        self.goals = goals
        self.first = first

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        options = dict(options or {})
        number = options.get("goal_index")
        if number is not None and number >= self.first:
            del options["goal_index"]
            options["goal"] = self.goals[number - self.first]
        return self.env.reset(seed=seed, options=options)


def with_goals(envs: Sequence[gym.Env], goals: Sequence[Goal], first: int = 0) -> list[gym.Env]:
    """``envs`` playing ``goals`` as goal numbers ``first, first + 1, ...`` (the envs themselves
    when there are no goals to add)."""
    if not goals:
        return list(envs)
    return [NumberedGoals(env, goals, first) for env in envs]
