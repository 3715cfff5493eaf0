"""A policy trained by apo-agent (A*PO or GRPO), played with the prompts it was trained on.

``run`` is a training run's output folder (it holds ``config.json`` and ``final-model/``) or
a model folder inside one (e.g. ``reference/``, pi_ref after a warm start); a LoRA run's
adapters load with their base model. The agent rebuilds the run's prompt encoder (context
mode, system prompt, page length) from ``config.json``, so the policy sees exactly the kind
of context it learnt on, and all env slots are answered in one batched generation.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.harness.agents.base import AgentFactory, Info

DEFAULT_RUN = Path(__file__).resolve().parents[2] / "results" / "apo" / "policy"


def is_model_folder(path: Path) -> bool:
    """A saved model, or LoRA adapters (what a run with ``lora_rank > 0`` saves)."""
    return (path / "config.json").is_file() or (path / "adapter_config.json").is_file()


def run_folder(run: str | Path) -> tuple[Path, Path]:
    """(model folder, folder of config.json) for a run folder or a model folder inside one."""
    path = Path(run)
    for model, config in ((path / "final-model", path), (path, path.parent), (path, path)):
        stored = config / "config.json"
        if is_model_folder(model) and stored.is_file() and "algorithm" in stored.read_text():
            return model, config
    raise FileNotFoundError(
        f"{path} is not an apo-agent run: expected config.json (the training config) and "
        "final-model/ in it; train one with `nox -s train`"
    )


class APOAgent:
    """Acts with an apo-agent policy; one per env slot, sharing the loaded model."""

    def __init__(self, policy: Any, encoder: Any, temperature: float, max_new_tokens: int) -> None:
        self.policy = policy
        self.encoder = encoder
        self.temperature = temperature
        self.max_new_tokens = max_new_tokens
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        from apo_agent.context import EpisodeContext

        self._seed = seed
        self.context = EpisodeContext(self.encoder)
        self.last_output: str | None = None

    def act(self, observation: str, info: Info) -> str:
        return type(self).act_batch([self], [observation], [info])[0]

    @classmethod
    def act_batch(
        cls, agents: Sequence[APOAgent], observations: Sequence[str], infos: Sequence[Info]
    ) -> list[str]:
        """One batched generation for all slots."""
        import torch

        from apo_agent.rollout import action_from_answer

        first = agents[0]
        if first._seed is not None:  # sampled answers depend on the episode seed and the turn
            torch.manual_seed(first._seed * 1000 + len(first.context.actions))
        prompts = [a.context.prompt(o, dict(i)) for a, o, i in zip(agents, observations, infos, strict=True)]
        answers = first.policy.generate(
            prompts,
            max_new_tokens=first.max_new_tokens,
            temperature=first.temperature,
            constraints=[agent.context.constraint for agent in agents],
        )
        actions = []
        for agent, answer in zip(agents, answers, strict=True):
            text = first.policy.tokenizer.decode(answer, skip_special_tokens=True)
            action = action_from_answer(text)
            agent.context.record(answer, action)
            agent.last_output = text
            actions.append(action)
        return actions


def factory(
    run: str = str(DEFAULT_RUN), temperature: float = 1.0, max_new_tokens: int = 0, device: str = "cpu"
) -> AgentFactory:
    """Agents sharing one loaded apo-agent policy.

    ``temperature`` 1.0 samples from the policy (how it was trained and evaluated), 0 is
    greedy; ``max_new_tokens`` 0 keeps the run's own limit.
    """
    from apo_agent.config import TrainConfig
    from apo_agent.policy import LMPolicy
    from apo_agent.trainer import prompt_encoder

    model_dir, config_dir = run_folder(run)
    stored = json.loads((config_dir / "config.json").read_text())
    config = TrainConfig(**{**stored, "model": str(model_dir), "device": device, "sft_epochs": 0})
    policy = LMPolicy.load(str(model_dir), device=device, bf16=False, with_reference=False)
    encoder = prompt_encoder(policy.tokenizer, config)
    limit = max_new_tokens or config.max_new_tokens
    return lambda: APOAgent(policy, encoder, temperature, limit)
