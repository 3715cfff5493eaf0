"""Stage 1 of A*PO: the optimal value V*(x) of each training goal, from reference episodes.

The reference returns are cached on disk, keyed by the reference model's weights, the env
configuration, the prompt/sampling settings and the seed, one list per goal. V* is
recomputed from the cached returns, so a different beta1 reuses them, and asking for more
samples than are cached only runs the missing episodes.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym

from apo_agent.engines import RolloutEngine
from apo_agent.model.policy import LMPolicy
from apo_agent.objectives import optimal_value
from apo_agent.rollout.episodes import collect_episodes
from apo_agent.rollout.tokens import PromptEncoder
from apo_agent.runtime.seeding import reference_episode_seed, seed_everything


@dataclass(frozen=True)
class GoalValue:
    """V*(x) and the reference returns it came from."""

    goal_index: int
    value: float
    rewards: tuple[float, ...]

    def kept_by(self, goal_filter: str) -> bool:
        """Whether Stage 2 trains on this goal under ``goal_filter`` (see `TrainConfig.goal_filter`)."""
        if goal_filter == "all_zero":
            return any(abs(r) > 1e-9 for r in self.rewards)
        if goal_filter == "all_equal":
            return max(self.rewards) - min(self.rewards) > 1e-9
        return True


class ReferenceRewardCache:
    """Reference returns per goal in a JSON file named by the hash of ``key``."""

    def __init__(self, directory: str | os.PathLike[str], key: dict[str, Any]) -> None:
        self.key = key
        digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:24]
        self.path = Path(directory) / f"reference-rewards-{digest}.json"
        self.rewards: dict[int, list[float]] = {}
        self.seconds = 0.0
        """Wall-clock spent sampling the cached episodes: what Stage 1 cost, even when a later
        run only reads the cache (a fair comparison counts it)."""
        self.cpu_seconds = 0.0
        """The CPU time of the same (all threads of the process): the cost on a shared machine."""
        if self.path.is_file():
            stored = json.loads(self.path.read_text())
            self.rewards = {int(goal): list(values) for goal, values in stored["rewards"].items()}
            self.seconds = float(stored.get("seconds", 0.0))
            self.cpu_seconds = float(stored.get("cpu_seconds", 0.0))

    def cost_of(self, episodes: int) -> tuple[float, float]:
        """(seconds, CPU seconds) of ``episodes`` of the cached episodes at their mean cost: a
        run that uses N of a larger cache's samples per goal counts what N would have cost."""
        cached = sum(len(rewards) for rewards in self.rewards.values())
        share = min(1.0, episodes / cached) if cached else 0.0
        return self.seconds * share, self.cpu_seconds * share

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        rewards = {str(g): r for g, r in sorted(self.rewards.items())}
        payload = {
            "key": self.key,
            "seconds": self.seconds,
            "cpu_seconds": self.cpu_seconds,
            "rewards": rewards,
        }
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(payload, indent=1, default=str))
        temporary.replace(self.path)  # atomic: a killed run never leaves half a file


def estimate_optimal_values(
    reference: LMPolicy | RolloutEngine,
    envs: Sequence[gym.Env],
    encoder: PromptEncoder,
    goal_indices: Sequence[int],
    *,
    samples: int,
    beta1: float,
    max_new_tokens: int,
    temperature: float = 1.0,
    seed: int = 0,
    cache: ReferenceRewardCache | None = None,
    progress: bool = True,
) -> dict[int, GoalValue]:
    """Runs N reference episodes per goal (those not cached) and returns V* per goal.

    Args:
        reference: pi_ref.
        envs: Train-split envs (their number is the batch size), possibly set up to play
            goals of one's own by number (`apo_agent.rollout.goals.with_goals`).
        encoder: The prompt encoder the policy uses.
        goal_indices: Training goals (goal numbers the envs play).
        samples: N, reference episodes per goal.
        beta1: Temperature of the soft maximum.
        max_new_tokens: Answer length limit per turn.
        temperature: Sampling temperature of the reference episodes.
        seed: Run seed (env seeds derive from it).
        cache: Where cached returns are read and the new ones written.
        progress: Show a progress bar.
    """
    known = cache.rewards if cache is not None else {}
    requests = [
        (goal, reference_episode_seed(seed, goal, sample))
        for goal in goal_indices
        for sample in range(len(known.get(goal, [])), samples)
    ]
    if requests:
        if any(known.get(goal) for goal, _ in requests):
            # Every run seeds its RNG the same way, so a top-up of the cache would replay the
            # cached episodes' draws: seed the sampler from the first new episode's seed instead.
            seed_everything(requests[0][1])
        started, cpu_started = time.perf_counter(), time.process_time()
        episodes = collect_episodes(
            reference,
            envs,
            encoder,
            requests,
            max_new_tokens=max_new_tokens,
            temperature=temperature,
            description="Stage 1: reference episodes",
            progress=progress,
        )
        for episode in episodes:
            known.setdefault(episode.goal_index, []).append(episode.reward)
        if cache is not None:
            cache.rewards = known
            cache.seconds += time.perf_counter() - started
            cache.cpu_seconds += time.process_time() - cpu_started
            cache.save()
    values = {}
    for goal in goal_indices:
        rewards = tuple(known[goal][:samples])
        values[goal] = GoalValue(goal, optimal_value(rewards, beta1), rewards)
    return values
