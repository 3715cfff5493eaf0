"""Agents playing episodes: the one episode loop, recorded as `webshop_gym.trajectories`.

`play_agent_episodes` gives each slot of a vector env one agent (`webshop_gym.agents.protocol`),
resets it with its episode's seed, asks all slots for their actions in one call
(`act_all`: one batched model call for an LLM agent) and returns every episode as a
`webshop_gym.trajectories.Episode`, the format ``webshop-gym replay`` plays
(`write_trajectories` writes them). The slots are scheduled by
`webshop_gym.agents.scheduler.play_episodes`; the benchmark runner (`benchmarks.harness.run`)
and `webshop_gym.agents.scripted.run_episode` both play through here.

Example:
    >>> import gymnasium as gym
    >>> import webshop_gym
    >>> from webshop_gym.agents.scripted import RulePolicy
    >>> envs = [gym.make("WebShop-Mini-Text-v0", split="test") for _ in range(2)]
    >>> starts = [EpisodeStart(seed=i, options={"goal_index": i}) for i in range(3)]
    >>> played = play_agent_episodes(envs, [StatelessAgent(RulePolicy()) for _ in envs], starts)
    >>> [(e.header["goal_index"], e.actions[-1]) for e in played]
    [(0, 'click[buy now]'), (1, 'click[buy now]'), (2, 'click[buy now]')]
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium as gym

from webshop_gym.agents.protocol import Agent, Info, act_all
from webshop_gym.agents.scheduler import EpisodeStart, Step, Turn, play_episodes
from webshop_gym.trajectories import Episode, episode_line, json_safe
from webshop_gym.trajectories import Step as RecordedStep

__all__ = ["EpisodeStart", "StatelessAgent", "play_agent_episodes"]


class StatelessAgent:
    """A stateless policy (``act`` only, as `webshop_gym.agents.scripted.RulePolicy`) as an `Agent`."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy

    def reset(self, seed: int | None = None) -> None:
        del seed  # the policy keeps no episode state

    def act(self, observation: str, info: Info) -> str:
        return str(self.policy.act(observation, dict(info)))


def play_agent_episodes(
    envs: Sequence[gym.Env],
    agents: Sequence[Agent],
    episodes: Sequence[EpisodeStart],
    *,
    metadata: Callable[[int], Mapping[str, Any]] | None = None,
    on_episode: Callable[[int, Episode], None] | None = None,
) -> list[Episode]:
    """Plays every episode once, agent ``i`` acting in ``envs[i]``, and returns them recorded.

    Args:
        envs: One env per slot (the caller's: not closed).
        agents: One agent per env; reset with the seed of each episode it starts.
        episodes: The reset arguments of each episode.
        metadata: Extra fields for the episode line of episode ``i`` (e.g. who played it).
        on_episode: Called with each episode as it ends (its number and the record).

    Returns:
        The episodes in the order of ``episodes``, as `webshop_gym.trajectories` records them.
    """
    if len(agents) < min(len(envs), len(episodes)):
        raise ValueError(f"{len(envs)} envs need as many agents, got {len(agents)}")
    headers: dict[int, dict[str, Any]] = {}
    steps: dict[int, list[RecordedStep]] = {}
    started: dict[int, float] = {}
    played: dict[int, Episode] = {}

    def on_start(turn: Turn) -> None:
        agents[turn.slot].reset(seed=episodes[turn.episode].seed)
        extra = dict(metadata(turn.episode)) if metadata is not None else {}
        env = envs[turn.slot]
        headers[turn.episode] = episode_line(
            env, episodes[turn.episode].seed, turn.observation, turn.info, "agent", extra
        )
        steps[turn.episode], started[turn.episode] = [], time.perf_counter()

    def on_step(step: Step) -> None:
        recorded = steps[step.episode]
        output = getattr(agents[step.slot], "last_output", None)
        recorded.append(
            RecordedStep(
                t=len(recorded) + 1,
                action=step.action,
                observation=step.observation,
                reward=step.reward,
                terminated=step.terminated,
                truncated=step.truncated,
                info=json_safe(step.info),
                seconds=round(time.perf_counter() - started[step.episode], 4),
                agent_output=None if output is None else str(output),
            )
        )
        if step.done:
            played[step.episode] = Episode(headers.pop(step.episode), tuple(steps.pop(step.episode)))
            if on_episode is not None:
                on_episode(step.episode, played[step.episode])

    def act(turns: list[Turn]) -> list[str]:
        return act_all(
            [agents[turn.slot] for turn in turns],
            [turn.observation for turn in turns],
            [turn.info for turn in turns],
        )

    play_episodes(envs, episodes, act, on_start=on_start, on_step=on_step)
    return [played[i] for i in range(len(episodes))]
