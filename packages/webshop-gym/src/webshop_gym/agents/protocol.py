"""The one protocol every agent that plays WebShop follows (the benchmarks' agents, the LLM agent).

An agent sees what the text env shows, the observation and ``info``, and answers with an
action string. It never reads the goal. `webshop_gym.agents.episodes.play_agent_episodes`
keeps one agent per vector-env slot and calls ``reset`` at the start of each episode with
that episode's seed, so an episode plays the same whichever slot runs it.

Agents whose model can answer many prompts at once (an LLM) may also define a class
method ``act_batch(agents, observations, infos)``; the episode loop then asks all its
slots in one call (`act_all`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

Info = Mapping[str, Any]


@runtime_checkable
class Agent(Protocol):
    """Plays WebShop episodes through observations and ``info`` only."""

    def reset(self, seed: int | None = None) -> None:
        """Starts a new episode (forgets the last one); ``seed`` seeds any randomness."""

    def act(self, observation: str, info: Info) -> str:
        """The next action, e.g. ``"search[red shoes]"`` or ``"click[buy now]"``."""


class BatchActing(Protocol):
    """An agent class that answers for several agents (one per env slot) in one call."""

    @classmethod
    def act_batch(
        cls, agents: Sequence[Any], observations: Sequence[str], infos: Sequence[Info]
    ) -> list[str]:
        """One action per agent, as ``agents[i].act(observations[i], infos[i])`` would give."""


AgentFactory = Callable[[], Agent]
"""Makes a fresh agent for one env slot; shared parts (a loaded model) live in the closure."""


def act_all(agents: Sequence[Agent], observations: Sequence[str], infos: Sequence[Info]) -> list[str]:
    """The next action of each agent: one ``act_batch`` call where the agents' class has one,
    else ``act`` per agent."""
    if not agents:
        return []
    batch = getattr(type(agents[0]), "act_batch", None)
    if batch is not None and len(agents) > 1:
        return list(batch(agents, observations, infos))
    return [
        agent.act(observation, info)
        for agent, observation, info in zip(agents, observations, infos, strict=True)
    ]
