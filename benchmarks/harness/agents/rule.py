"""The paper's rule baseline: search the instruction, open the first result, buy."""

from __future__ import annotations

from webshop_gym.agents.protocol import AgentFactory, Info
from webshop_gym.agents.scripted import RulePolicy


class RuleAgent:
    """`webshop_gym.agents.scripted.RulePolicy` behind the agent protocol (it keeps no state)."""

    def __init__(self) -> None:
        self._policy = RulePolicy()

    def reset(self, seed: int | None = None) -> None:
        del seed  # deterministic and stateless

    def act(self, observation: str, info: Info) -> str:
        return self._policy.act(observation, dict(info))


def factory() -> AgentFactory:
    """Rule agents (no options)."""
    return RuleAgent
