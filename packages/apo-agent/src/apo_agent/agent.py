"""LLM agents that play WebShop one observation at a time: the agent protocol over apo-agent's engines.

An agent follows the protocol the benchmark runner (and `webshop_gym`'s episode player)
uses: ``reset(seed)``, ``act(observation, info) -> action``, and the class method
``act_batch(agents, observations, infos)`` that answers all env slots in one call. The
raw answer of each step is kept in ``last_output``; an answer without a readable action
is sent as it is (`shared_prompts.action_from_answer`), so the env reports it.

* `LLMAgent`: any chat model, prompted with `shared_prompts` as chat messages (the system
  prompt, the last ``history_turns`` turns, the page and its actions), answered by a
  `apo_agent.engines.base.ChatBackend`: a transformers model in process
  (`apo_agent.engines.transformers_chat.TransformersChat`: constrained decoding with
  training's mask, prefix reuse) or an OpenAI-compatible server
  (`apo_agent.engines.openai_http.OpenAIChat`). Both follow one answer-budget rule
  (`apo_agent.model.constrained.whole_answer_budget`).
* `PolicyAgent` (`apo_agent.rollout.policy_agent`): a policy trained here, token-in /
  token-out with the run's own prompt encoder (token ids, context mode, constraint) on a
  rollout engine. It is the agent training, Stage 1 and evaluation play
  (`apo_agent.rollout.collect_episodes`, one per episode); `policy_agents` loads one from a
  run folder (`run_folder`) for the benchmarks.

The two differ in what the model reads: `LLMAgent` a chat conversation as text (any model,
local or behind an HTTP endpoint), `PolicyAgent` the episode's exact token ids, whose
log-probs the losses need.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from apo_agent.engines.base import ChatBackend, Message
from apo_agent.model.constrained import PageActions
from apo_agent.rollout.policy_agent import PolicyAgent, step_seed
from shared_prompts import PromptConfig, action_from_answer, system_prompt, turn_prompt

__all__ = [
    "SEARCH_QUERIES",
    "LLMAgent",
    "PolicyAgent",
    "is_model_folder",
    "policy_agents",
    "run_folder",
    "step_seed",
]

Info = Mapping[str, Any]
SEARCH_QUERIES = ("free", "instruction")


class LLMAgent:
    """Plays through a chat backend with the shared prompts.

    Args:
        backend: Where answers come from (shared by all slots of a run).
        prompts: How prompts are written.
        history_turns: Earlier turns (prompt and answer) kept in the conversation.
        search_query: ``"free"`` (the model writes the query) or ``"instruction"`` (a
            constrained backend may only search the instruction, as the rule baseline does).
    """

    def __init__(
        self,
        backend: ChatBackend,
        prompts: PromptConfig | None = None,
        history_turns: int = 2,
        search_query: str = "free",
    ) -> None:
        if search_query not in SEARCH_QUERIES:
            raise ValueError(f"search_query must be one of {SEARCH_QUERIES}, got {search_query!r}")
        self.backend = backend
        self.prompts = prompts or PromptConfig()
        self.history_turns = max(0, history_turns)
        self.search_query = search_query
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        self._seed = seed
        self._turns: list[tuple[str, str]] = []
        self.last_output: str | None = None

    def conversation(self, observation: str, info: Info) -> list[Message]:
        """The messages the model answers next."""
        messages = [{"role": "system", "content": system_prompt(self.prompts)}]
        for prompt, answer in self._turns[-self.history_turns :] if self.history_turns else []:
            messages += [{"role": "user", "content": prompt}, {"role": "assistant", "content": answer}]
        prompt = turn_prompt(
            str(info["instruction"]),
            observation,
            list(info["available_actions"]),
            int(info["steps_left"]),
            self.prompts,
        )
        messages.append({"role": "user", "content": prompt})
        return messages

    def page_actions(self, info: Info) -> PageActions:
        """What a constrained backend lets the model answer on this page."""
        fixed = str(info["instruction"]) if self.search_query == "instruction" else None
        return PageActions(tuple(info["available_actions"]), fixed)

    def _answer(self, messages: list[Message], output: str) -> str:
        self._turns.append((messages[-1]["content"], output))
        self.last_output = output
        return action_from_answer(output)

    def act(self, observation: str, info: Info) -> str:
        return type(self).act_batch([self], [observation], [info])[0]

    @classmethod
    def act_batch(
        cls, agents: Sequence[LLMAgent], observations: Sequence[str], infos: Sequence[Info]
    ) -> list[str]:
        """Asks the (shared) backend for all slots at once."""
        conversations = [a.conversation(o, i) for a, o, i in zip(agents, observations, infos, strict=True)]
        pages = [a.page_actions(i) for a, i in zip(agents, infos, strict=True)]
        first = agents[0]
        outputs = first.backend.complete(
            conversations,
            seed=step_seed(first._seed, len(first._turns)),
            pages=pages,
            think=first.prompts.think,
        )
        return [a._answer(m, out) for a, m, out in zip(agents, conversations, outputs, strict=True)]


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
) -> Callable[[], PolicyAgent]:
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
    return lambda: PolicyAgent(engine, encoder, temperature, limit)
