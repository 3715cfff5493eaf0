"""Resumable checkpoints: trainable weights, optimizer, every RNG, the step and the V* table.

Restoring a checkpoint and running one more step gives the same update, to the bit, as a
run that never stopped (on the same device and library versions).
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import numpy as np
import torch

from apo_agent.model.policy import LMPolicy
from apo_agent.optimal_values import GoalValue

_STEP_DIR = re.compile(r"step-(\d+)")


def checkpoint_dir(output_dir: str | Path, step: int) -> Path:
    return Path(output_dir) / "checkpoints" / f"step-{step:06d}"


def latest_checkpoint(output_dir: str | Path) -> Path | None:
    """The newest complete checkpoint in ``output_dir``, or None."""
    root = Path(output_dir) / "checkpoints"
    if not root.is_dir():
        return None
    complete = [p for p in root.iterdir() if _STEP_DIR.fullmatch(p.name) and (p / "state.pt").is_file()]
    return max(complete, key=lambda p: int(p.name.split("-")[1]), default=None)


def rng_state(generator: np.random.Generator) -> dict[str, Any]:
    state: dict[str, Any] = {
        "python": random.getstate(),
        "numpy": generator.bit_generator.state,
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng_state(state: dict[str, Any], generator: np.random.Generator) -> None:
    random.setstate(state["python"])
    generator.bit_generator.state = state["numpy"]
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save_checkpoint(
    output_dir: str | Path,
    step: int,
    policy: LMPolicy,
    optimizer: torch.optim.Optimizer,
    generator: np.random.Generator,
    values: dict[int, GoalValue],
    config: dict[str, Any],
) -> Path:
    """Writes ``checkpoints/step-NNNNNN/state.pt`` (atomically) and returns its folder."""
    directory = checkpoint_dir(output_dir, step)
    directory.mkdir(parents=True, exist_ok=True)
    trainable = {name for name, p in policy.model.named_parameters() if p.requires_grad}
    payload = {
        "step": step,
        "weights": {k: v.detach().cpu() for k, v in policy.model.state_dict().items() if k in trainable},
        "optimizer": optimizer.state_dict(),
        "rng": rng_state(generator),
        "values": {g: (v.value, list(v.rewards)) for g, v in values.items()},
        "config": config,
    }
    temporary = directory / "state.pt.tmp"
    torch.save(payload, temporary)
    temporary.replace(directory / "state.pt")
    return directory


def load_checkpoint(
    directory: str | Path,
    policy: LMPolicy,
    optimizer: torch.optim.Optimizer,
    generator: np.random.Generator,
) -> tuple[int, dict[int, GoalValue]]:
    """Restores weights, optimizer and RNGs in place; returns the step and the V* table."""
    payload = load_weights(directory, policy)
    optimizer.load_state_dict(payload["optimizer"])
    restore_rng_state(payload["rng"], generator)
    values = {
        int(g): GoalValue(int(g), value, tuple(rewards)) for g, (value, rewards) in payload["values"].items()
    }
    return int(payload["step"]), values


def load_weights(directory: str | Path, policy: LMPolicy) -> dict[str, Any]:
    """Puts a checkpoint's trained weights into ``policy`` (made from the run's starting model)
    and returns the whole checkpoint."""
    payload = torch.load(Path(directory) / "state.pt", map_location="cpu", weights_only=False)
    missing = set(payload["weights"]) - set(policy.model.state_dict())
    if missing:
        raise ValueError(
            f"checkpoint {directory} does not fit this model ({len(missing)} unknown tensors, e.g. "
            f"{sorted(missing)[0]}); use another output_dir or resume=False"
        )
    policy.model.load_state_dict(payload["weights"], strict=False)
    return payload
