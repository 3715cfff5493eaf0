"""The ``apo`` agent: a policy trained by apo-agent (A*PO or GRPO), played with the prompts it was trained on.

``run`` is a training run's output folder (it holds ``config.json`` and ``final-model/``) or
a model folder inside one (e.g. ``reference/``, pi_ref after a warm start); a LoRA run's
adapters load with their base model. A thin factory over `apo_agent.agent.policy_agents`:
the agents are the rollouts' own `apo_agent.agent.LLMAgent` over `TokenPrompting`, with the
run's prompt encoder rebuilt from ``config.json``, all env slots in one batched generation.
This module keeps the ``--set apo.*`` option names and defaults that recorded results name.
"""

from __future__ import annotations

from pathlib import Path

from apo_agent.agent import is_model_folder, run_folder
from webshop_gym.agents.protocol import AgentFactory

__all__ = ["DEFAULT_RUN", "factory", "is_model_folder", "run_folder"]

DEFAULT_RUN = Path(__file__).resolve().parents[2] / "results" / "apo" / "policy"


def factory(
    run: str = str(DEFAULT_RUN), temperature: float = 1.0, max_new_tokens: int = 0, device: str = "cpu"
) -> AgentFactory:
    """Agents sharing one loaded apo-agent policy.

    ``temperature`` 1.0 samples from the policy (how it was trained and evaluated), 0 is
    greedy; ``max_new_tokens`` 0 keeps the run's own limit.
    """
    from apo_agent.agent import policy_agents

    return policy_agents(run, temperature, max_new_tokens, device)
