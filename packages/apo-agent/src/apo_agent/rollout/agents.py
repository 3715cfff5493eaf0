"""The one LLM agent, and the scripted demonstrator of the warm start.

`LLMAgent` plays WebShop with a language model. Training's rollouts, Stage 1 and evaluation
(`apo_agent.rollout.collect_episodes`, one agent per episode) play it, and so do the
benchmarks' ``llm`` and ``apo`` agents. It follows webshop-gym's agent protocol
(`webshop_gym.agents.protocol`: ``reset``, ``act`` and the batched ``act_batch``). It seeds each
turn from the episode's seed (`step_seed`), keeps the raw answer in ``last_output`` and
sends an answer without a readable action as it is (`shared_prompts.action_from_answer`),
so the env reports it.

What differs between those uses is what the model reads, the agent's `Prompting`:

* `TokenPrompting`: a policy trained here reads the episode's exact token ids
  (`apo_agent.rollout.tokens.EpisodeContext`, the record the losses read: ids, agent mask,
  log-probs) and a rollout engine (transformers or vLLM) samples each answer.
* `ChatPrompting`: any chat model reads the conversation as text messages (the system
  prompt, the last ``history_turns`` turns, the page and its actions), answered by a chat
  backend: transformers in process with prefix reuse, or an OpenAI-compatible server.

Both constrain answers to the page's actions with one mask
(`apo_agent.engines.transformers.AllowedTokens`; over HTTP, a vLLM server gets the same set as
a regular expression) and give a whole action the tokens it needs by one rule
(`apo_agent.model.constrained.whole_answer_budget`).

`DemonstratorAgent` is not a model: a scripted demonstrator writes each answer, recorded as
the token ids the policy should say.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from apo_agent.engines.base import ChatBackend, Message, RolloutEngine
from apo_agent.model.constrained import PageActions
from apo_agent.rollout.tokens import EpisodeContext, PromptEncoder
from shared_prompts import PromptConfig, action_from_answer, system_prompt, turn_prompt

__all__ = [
    "SEARCH_QUERIES",
    "ChatPrompting",
    "ChatTurns",
    "DemonstratorAgent",
    "LLMAgent",
    "Prompting",
    "TokenPrompting",
    "step_seed",
]

Info = Mapping[str, Any]
SEARCH_QUERIES = ("free", "instruction")
ChatTurns = list[tuple[str, str]]
"""A chat episode's context: its (prompt, answer) turns so far."""


def step_seed(episode_seed: int | None, turn: int) -> int | None:
    """The seed of one turn's sampling: the episode's seed and the turn number, so that an
    episode plays the same whichever env slot runs it (None: unseeded)."""
    return None if episode_seed is None else episode_seed * 1000 + turn


class Prompting(Protocol):
    """How a model is prompted and asked: one per run, shared by its agents."""

    def new_context(self) -> Any:
        """A new episode's context: what the model has read and said so far."""
        ...

    def answer(
        self,
        contexts: Sequence[Any],
        observations: Sequence[str],
        infos: Sequence[Info],
        seed: int | None,
    ) -> list[str]:
        """Each context's answer text to its page, in one call; each turn goes into its context.
        ``seed`` (None: unseeded) seeds the sampling."""
        ...


class LLMAgent:
    """Plays with a language model, prompted by ``prompting``; one agent per env slot or
    episode, sharing the prompting (and so the model).

    ``reset(seed)`` with a seed makes each turn's sampling depend on the episode seed and
    the turn only (`step_seed`); without one (the training rollouts), sampling goes on from
    the global generator, as the run's seed set it. ``context`` holds the episode's record
    in the prompting's form (an `EpisodeContext` for `TokenPrompting`).
    """

    def __init__(self, prompting: Prompting) -> None:
        self.prompting = prompting
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        self._seed = seed
        self._turn = 0
        self.context = self.prompting.new_context()
        self.last_output: str | None = None

    def act(self, observation: str, info: Info) -> str:
        return type(self).act_batch([self], [observation], [info])[0]

    @classmethod
    def act_batch(
        cls, agents: Sequence[LLMAgent], observations: Sequence[str], infos: Sequence[Info]
    ) -> list[str]:
        """Asks the (shared) prompting of the first agent for all agents at once."""
        first = agents[0]
        answers = first.prompting.answer(
            [agent.context for agent in agents],
            observations,
            infos,
            step_seed(first._seed, first._turn),
        )
        for agent, answer in zip(agents, answers, strict=True):
            agent._turn += 1
            agent.last_output = answer
        return [action_from_answer(answer) for answer in answers]


class TokenPrompting:
    """A policy's own prompts as token ids, sampled by a rollout engine.

    Args:
        engine: Samples the answers (`apo_agent.engines`; an `LMPolicy` through
            `apo_agent.engines.as_engine`).
        encoder: The run's prompt encoder (`apo_agent.rollout.tokens.prompt_encoder`:
            context mode, system prompt, page length, constrained decoding).
        temperature: 0 greedy, else sampled from the full softmax at this temperature.
        max_new_tokens: Answer length limit per turn (a constrained whole action gets the
            tokens it needs: `apo_agent.model.constrained.answer_budget`).
    """

    def __init__(
        self, engine: RolloutEngine, encoder: PromptEncoder, temperature: float, max_new_tokens: int
    ) -> None:
        self.engine = engine
        self.encoder = encoder
        self.temperature = temperature
        self.max_new_tokens = max_new_tokens

    def new_context(self) -> EpisodeContext:
        return EpisodeContext(self.encoder)

    def answer(
        self,
        contexts: Sequence[EpisodeContext],
        observations: Sequence[str],
        infos: Sequence[Info],
        seed: int | None,
    ) -> list[str]:
        """Each context's prompt ids, answered by the engine (its constraint applied); the
        sampled ids, log-probs and action go into the context as they are."""
        if seed is not None:  # sampled answers depend on the episode seed and the turn
            import torch

            torch.manual_seed(seed)
        prompts = [c.prompt(o, dict(i)) for c, o, i in zip(contexts, observations, infos, strict=True)]
        samples = self.engine.sample(
            prompts,
            max_new_tokens=self.max_new_tokens,
            temperature=self.temperature,
            constraints=[context.constraint for context in contexts],
        )
        texts = []
        for context, sample in zip(contexts, samples, strict=True):
            text = self.engine.tokenizer.decode(sample.ids, skip_special_tokens=True)
            context.record(sample.ids, action_from_answer(text), sample.logprobs)
            texts.append(text)
        return texts


class ChatPrompting:
    """Any chat model, prompted with `shared_prompts` as chat messages.

    Args:
        backend: Where answers come from: `apo_agent.engines.transformers_chat.TransformersChat`
            or `apo_agent.engines.openai_http.OpenAIChat`.
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

    def new_context(self) -> ChatTurns:
        return []

    def conversation(self, turns: ChatTurns, observation: str, info: Info) -> list[Message]:
        """The messages the model answers next, after ``turns``."""
        messages = [{"role": "system", "content": system_prompt(self.prompts)}]
        for prompt, answer in turns[-self.history_turns :] if self.history_turns else []:
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

    def answer(
        self,
        contexts: Sequence[ChatTurns],
        observations: Sequence[str],
        infos: Sequence[Info],
        seed: int | None,
    ) -> list[str]:
        """All conversations in one call of the backend; each (prompt, answer) joins its turns."""
        conversations = [
            self.conversation(t, o, i) for t, o, i in zip(contexts, observations, infos, strict=True)
        ]
        outputs = self.backend.complete(
            conversations,
            seed=seed,
            pages=[self.page_actions(info) for info in infos],
            think=self.prompts.think,
        )
        for turns, messages, output in zip(contexts, conversations, outputs, strict=True):
            turns.append((messages[-1]["content"], output))
        return outputs


class DemonstratorAgent:
    """Answers with ``demonstrator(slot, observation, info)`` (text) and records the answer as
    the token ids the policy should sample (`PromptEncoder.answer_ids`), in the prompts the
    policy will see."""

    def __init__(
        self, demonstrator: Callable[[int, str, dict[str, Any]], str], slot: int, encoder: PromptEncoder
    ) -> None:
        self.demonstrator = demonstrator
        self.slot = slot
        self.encoder = encoder
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        del seed  # a demonstrator is scripted
        self.context = EpisodeContext(self.encoder)
        self.last_output: str | None = None

    def act(self, observation: str, info: Info) -> str:
        self.context.prompt(observation, dict(info))
        text = self.demonstrator(self.slot, observation, dict(info))
        action = action_from_answer(text)
        self.context.record(self.encoder.answer_ids(text), action)
        self.last_output = text
        return action
