"""A MaskablePPO policy (sb3-contrib) trained on `webshop_gym.wrappers.DiscreteActions`.

The agent computes the wrapper's features from the text observation and ``info`` with
`webshop_gym.wrappers.encode` (the same function the wrapper calls), asks the policy
for a slot under the action mask, and sends that slot's action. Policies come from
``python -m benchmarks.training.train_sb3``, which saves ``policy.zip`` and ``encoder.json`` side by side.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from webshop_gym.agents.protocol import AgentFactory, Info
from webshop_gym.wrappers import EncoderConfig, encode

DEFAULT_POLICY = Path(__file__).resolve().parents[2] / "results" / "sb3" / "policy.zip"


def save_encoder_config(config: EncoderConfig, policy_path: str | Path) -> Path:
    """Writes the encoder shape next to a saved policy (``encoder.json``)."""
    path = Path(policy_path).with_name("encoder.json")
    path.write_text(json.dumps(config.__dict__, indent=2) + "\n")
    return path


def load_encoder_config(policy_path: str | Path) -> EncoderConfig:
    path = Path(policy_path).with_name("encoder.json")
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: it is written next to the policy by benchmarks.training.train_sb3"
        )
    return EncoderConfig(**json.loads(path.read_text()))


class SB3Agent:
    """Acts with a MaskablePPO policy over the discrete-slot features.

    Args:
        policy: A ``MaskableActorCriticPolicy`` (sb3-contrib).
        config: The encoder shape the policy was trained with.
        deterministic: Take the most likely slot (else sample from the policy).
    """

    def __init__(self, policy: Any, config: EncoderConfig, deterministic: bool = True) -> None:
        self.policy = policy
        self.config = config
        self.deterministic = deterministic

    def reset(self, seed: int | None = None) -> None:
        if seed is not None and not self.deterministic:
            import torch

            torch.manual_seed(seed)

    def act(self, observation: str, info: Info) -> str:
        return self.act_batch([self], [observation], [info])[0]

    @classmethod
    def act_batch(
        cls, agents: Sequence[SB3Agent], observations: Sequence[str], infos: Sequence[Info]
    ) -> list[str]:
        """One forward pass for all slots."""
        encoded = [encode(o, i, agents[0].config) for o, i in zip(observations, infos, strict=True)]
        features = np.stack([e[0] for e in encoded])
        masks = np.stack([e[1] for e in encoded])
        slots, _ = agents[0].policy.predict(
            features, action_masks=masks, deterministic=agents[0].deterministic
        )
        return [actions[int(slot)] for (_, _, actions), slot in zip(encoded, slots, strict=True)]


def load_policy(path: str | Path) -> Any:
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"no policy at {path}; train one with `python -m benchmarks.training.train_sb3`"
        )
    return MaskableActorCriticPolicy.load(str(path), device="cpu")


def factory(policy: str = str(DEFAULT_POLICY), deterministic: bool = True) -> AgentFactory:
    """SB3 agents sharing one loaded policy (default: the recorded one in benchmarks/results/sb3)."""
    import torch

    torch.set_num_threads(1)  # one small MLP: threads only contend with the env
    loaded = load_policy(policy)
    config = load_encoder_config(policy)
    return lambda: SB3Agent(loaded, config, deterministic)
