"""The LLM agent for the agent protocol, and loading a trained run as one.

`LLMAgent` (`apo_agent.rollout.agents`) is the one agent that plays WebShop with a language
model: training's rollouts, Stage 1 and evaluation play it, and so do the benchmarks'
``llm`` and ``apo`` agents. It follows the protocol the benchmark runner (and `webshop_gym`'s
episode player) uses: ``reset(seed)``, ``act(observation, info) -> action``, and the class
method ``act_batch(agents, observations, infos)`` that answers all env slots in one call. The
raw answer of each step is kept in ``last_output``; an answer without a readable action is
sent as it is (`shared_prompts.action_from_answer`), so the env reports it.

How the model is prompted is the agent's `Prompting`:

* `ChatPrompting`: any chat model, prompted with `shared_prompts` as chat messages,
  answered by an `apo_agent.engines.base.ChatBackend`: a transformers model in process
  (`apo_agent.engines.transformers_chat.TransformersChat`: constrained decoding with
  training's mask, prefix reuse) or an OpenAI-compatible server
  (`apo_agent.engines.openai_http.OpenAIChat`).
* `TokenPrompting`: a policy trained here, token-in / token-out with the run's own prompt
  encoder (token ids, context mode, constraint) on a rollout engine; `policy_agents` loads
  one from a run folder (`run_folder`) for the benchmarks.

Both follow one answer-budget rule (`apo_agent.model.constrained.whole_answer_budget`).
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
