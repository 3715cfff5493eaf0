"""Success and score of a policy on a split's goals."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from apo_agent.context import PromptEncoder
from apo_agent.engines import RolloutEngine
from apo_agent.policy import LMPolicy
from apo_agent.rollout import Episode, collect_episodes
from apo_agent.seeding import evaluation_seed


@dataclass
class EvalResult:
    """Aggregates over one episode per goal (success and score in percent, as the paper reports)."""

    success: float
    score: float
    steps: float
    invalid_actions: float
    goals: int
    episodes: list[Episode] = field(default_factory=list, repr=False)

    def summary(self) -> dict[str, Any]:
        return {
            "success": self.success,
            "score": self.score,
            "steps": self.steps,
            "invalid_actions": self.invalid_actions,
            "goals": self.goals,
        }


def evaluate(
    policy: LMPolicy | RolloutEngine,
    envs: Sequence[gym.Env],
    encoder: PromptEncoder,
    goal_indices: Sequence[int],
    *,
    temperature: float,
    max_new_tokens: int,
    seed: int = 0,
    description: str = "evaluation",
    progress: bool = True,
) -> EvalResult:
    """One episode per goal; success = share of purchases with R == 1, score = 100 * mean R."""
    episodes = collect_episodes(
        policy,
        envs,
        encoder,
        [(goal, evaluation_seed(seed, goal)) for goal in goal_indices],
        max_new_tokens=max_new_tokens,
        temperature=temperature,
        description=description,
        progress=progress,
    )
    return EvalResult(
        success=100.0 * statistics.fmean(e.success for e in episodes),
        score=100.0 * statistics.fmean(e.score for e in episodes),
        steps=statistics.fmean(e.steps for e in episodes),
        invalid_actions=statistics.fmean(e.invalid_actions for e in episodes),
        goals=len(episodes),
        episodes=episodes,
    )
