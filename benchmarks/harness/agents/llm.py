"""The ``llm`` agent: a chat model (transformers, in process, or an OpenAI-compatible endpoint).

A thin factory over apo-agent's one agent stack: `apo_agent.agent.LLMAgent` with
`ChatPrompting`, which prompts with `shared_prompts` and asks a chat backend,
`apo_agent.engines.transformers_chat.TransformersChat` (constrained decoding with the mask
training samples with, prefix reuse, ``token_counts``) or
`apo_agent.engines.openai_http.OpenAIChat` (the standard-library HTTP client; vLLM's
``structured_outputs`` for constrained answers). Both give a constrained whole action the
tokens it needs by one rule (`apo_agent.model.constrained.whole_answer_budget`). This module
keeps the ``--set llm.*`` option names and defaults that recorded results name, and the
names it used to define, for code that imports them from here.
"""

from __future__ import annotations

import os

from apo_agent.agent import SEARCH_QUERIES, ChatPrompting, LLMAgent
from apo_agent.engines.base import ChatBackend, Message
from apo_agent.engines.openai_http import OpenAIChat
from apo_agent.engines.prefix_cache import PrefixCaches
from apo_agent.engines.transformers_chat import TokenCounts, TransformersChat
from apo_agent.model.answer_regex import (
    MAX_QUERY_CHARS,
    QUERY_CHARS,
    THINK_CLOSE,
    THINK_OPEN,
    answer_pattern,
    answer_token_budget,
)
from apo_agent.model.constrained import PageActions
from shared_prompts import PromptConfig
from webshop_gym.agents.protocol import AgentFactory

__all__ = [
    "MAX_QUERY_CHARS",
    "QUERY_CHARS",
    "SEARCH_QUERIES",
    "THINK_CLOSE",
    "THINK_OPEN",
    "ChatBackend",
    "ChatPrompting",
    "LLMAgent",
    "Message",
    "OpenAIChat",
    "PageActions",
    "PrefixCaches",
    "TokenCounts",
    "TransformersChat",
    "answer_pattern",
    "answer_token_budget",
    "factory",
]


def factory(
    model: str = "",
    base_url: str = "",
    temperature: float = 0.0,
    top_p: float = 1.0,
    max_new_tokens: int = 128,
    device: str = "",
    dtype: str = "auto",
    history_turns: int = 2,
    few_shot: bool = False,
    few_shot_style: str = "react",
    think: bool = True,
    api_key_env: str = "OPENAI_API_KEY",
    cpu_threads: int = 0,
    constrained: bool = False,
    search_query: str = "free",
    max_observation_chars: int = 4000,
    timeout_s: float = 60.0,
    parallel_requests: int = 8,
    reuse_prefix: str = "auto",
) -> AgentFactory:
    """LLM agents sharing one backend.

    ``model`` alone: a transformers model (hub name, local folder, or ``smollm2``).
    ``base_url`` (and ``model``, the name the server knows): an OpenAI-compatible endpoint.
    ``cpu_threads`` > 0 sets torch's CPU threads (1 is fastest for small models on a busy
    machine). ``few_shot`` adds the ``few_shot_style`` example (`shared_prompts.few_shot_example`;
    ``react``: the published ReAct WebShop episode). ``constrained`` answers only with the
    page's actions (over HTTP: a vLLM server's structured outputs); ``search_query="instruction"``
    then makes the instruction the only search. ``timeout_s``: seconds an endpoint may take per answer;
    ``parallel_requests``: answers asked of it at once (one per env slot keeps a server's batch full).
    ``reuse_prefix`` (transformers only: ``true``, ``false`` or ``auto``, on for the CPU)
    reads each prompt from the cached prefix it shares with an earlier one, one slot at a
    time (`apo_agent.engines.transformers_chat.TransformersChat`).
    """
    if not model:
        raise ValueError(
            "the llm agent needs model=<hub name or folder> (and base_url=... for an HTTP endpoint)"
        )
    reuse_choices = {"auto": None, "true": True, "false": False}
    if reuse_prefix.lower() not in reuse_choices:
        raise ValueError(f"reuse_prefix must be auto, true or false, got {reuse_prefix!r}")
    reuse = reuse_choices[reuse_prefix.lower()]
    backend: ChatBackend
    if base_url:
        if reuse:
            raise ValueError(
                "reuse_prefix=true needs a transformers model (no base_url); "
                "a server reuses prompt prefixes on its side if it does so at all"
            )
        backend = OpenAIChat(
            base_url,
            model,
            api_key=os.environ.get(api_key_env),
            temperature=temperature,
            max_tokens=max_new_tokens,
            timeout=timeout_s,
            parallel=parallel_requests,
            constrained=constrained,
        )
    else:
        if cpu_threads > 0:
            import torch

            torch.set_num_threads(cpu_threads)
        backend = TransformersChat(
            model,
            temperature,
            top_p,
            max_new_tokens,
            device or None,
            dtype,
            constrained=constrained,
            reuse_prefix=reuse,
        )
    prompts = PromptConfig(
        few_shot=few_shot,
        think=think,
        few_shot_style=few_shot_style,
        max_observation_chars=max_observation_chars,
    )
    prompting = ChatPrompting(backend, prompts, history_turns, search_query)
    return lambda: LLMAgent(prompting)
