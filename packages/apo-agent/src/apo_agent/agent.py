"""The LLM agent, and a trained run loaded as agents.

`LLMAgent` and its promptings (`ChatPrompting`: chat text to any chat backend;
`TokenPrompting`: a policy's own token ids on a rollout engine) live in
`apo_agent.rollout.agents`, whose docstring describes them; they are importable from here.
This module adds `policy_agents`, which loads a training run (`run_folder`) as agents for the
benchmarks.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from apo_agent.rollout.agents import (
    SEARCH_QUERIES,
    ChatPrompting,
    LLMAgent,
    Prompting,
    TokenPrompting,
    step_seed,
)

__all__ = [
    "SEARCH_QUERIES",
    "ChatPrompting",
    "LLMAgent",
    "Prompting",
    "TokenPrompting",
    "is_model_folder",
    "policy_agents",
    "run_folder",
    "step_seed",
]


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


def policy_agents(
    run: str | Path, temperature: float = 1.0, max_new_tokens: int = 0, device: str = "cpu"
) -> Callable[[], LLMAgent]:
    """Agents sharing one loaded policy of a training run (its folder, or a model folder in
    it, e.g. ``reference/``; a LoRA run's adapters load with their base model).

    The run's prompt encoder is rebuilt from its ``config.json`` (context mode, system
    prompt, page length, constrained decoding), so the policy sees exactly the kind of
    context it learnt on. Only the decoding settings are read: a run recorded by an older
    version, whose config names fields since renamed, still loads. ``max_new_tokens`` 0
    keeps the run's own limit.
    """
    import dataclasses

    from apo_agent.config import DecodingConfig
    from apo_agent.engines import TransformersEngine
    from apo_agent.model.policy import LMPolicy
    from apo_agent.rollout.tokens import prompt_encoder

    model_dir, config_dir = run_folder(run)
    stored = json.loads((config_dir / "config.json").read_text())
    names = {f.name for f in dataclasses.fields(DecodingConfig)}
    decoding = DecodingConfig(**{name: value for name, value in stored.items() if name in names})
    policy = LMPolicy.load(str(model_dir), device=device, bf16=False, with_reference=False)
    engine = TransformersEngine(policy)
    encoder = prompt_encoder(policy.tokenizer, decoding)
    limit = max_new_tokens or decoding.max_new_tokens
    prompting = TokenPrompting(engine, encoder, temperature, limit)
    return lambda: LLMAgent(prompting)
