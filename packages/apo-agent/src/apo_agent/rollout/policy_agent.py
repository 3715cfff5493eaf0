"""The agents that play a policy token-in / token-out: the rollouts', evaluation's and the benchmarks'.

Both follow webshop-gym's agent protocol (`webshop_gym.agents.protocol`: ``reset``, ``act``
and the batched ``act_batch``) and keep their episode's token record in ``context``
(`apo_agent.rollout.tokens.EpisodeContext`), which is what the losses read:

* `PolicyAgent`: a rollout engine samples each answer (`sample_turn`, the one per-turn step).
  `apo_agent.rollout.collect_episodes` plays one per episode for training, Stage 1 and
  evaluation; the benchmarks' ``apo`` agent is the same class (`apo_agent.agent.policy_agents`).
* `DemonstratorAgent`: a scripted demonstrator writes each answer as text, recorded as the
  tokens the policy should say (the warm start's demonstrations).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from apo_agent.engines.base import RolloutEngine
from apo_agent.rollout.tokens import EpisodeContext, PromptEncoder
from shared_prompts import action_from_answer

__all__ = ["DemonstratorAgent", "PolicyAgent", "sample_turn", "step_seed"]

Info = Mapping[str, Any]


def step_seed(episode_seed: int | None, turn: int) -> int | None:
    """The seed of one turn's sampling: the episode's seed and the turn number, so that an
    episode plays the same whichever env slot runs it (None: unseeded)."""
    return None if episode_seed is None else episode_seed * 1000 + turn


def sample_turn(
    engine: RolloutEngine,
    contexts: Sequence[EpisodeContext],
    prompts: Sequence[Sequence[int]],
    *,
    max_new_tokens: int,
    temperature: float,
) -> list[str]:
    """One turn of several episodes: ``engine`` answers each context's ``prompt`` (its
    constraint applied), each answer's ids, log-probs and action go into its context, and
    the answer texts come back."""
    samples = engine.sample(
        prompts,
        max_new_tokens=max_new_tokens,
        temperature=temperature,
        constraints=[c.constraint for c in contexts],
    )
    texts = []
    for context, sample in zip(contexts, samples, strict=True):
        text = engine.tokenizer.decode(sample.ids, skip_special_tokens=True)
        context.record(sample.ids, action_from_answer(text), sample.logprobs)
        texts.append(text)
    return texts


class PolicyAgent:
    """Acts with a policy through a rollout engine; one per env slot (or episode), sharing the engine.

    Args:
        engine: Samples the answers (`apo_agent.engines`; an `LMPolicy` through
            `apo_agent.engines.as_engine`).
        encoder: The run's prompt encoder (`apo_agent.rollout.tokens.prompt_encoder`).
        temperature: 0 greedy, else sampled from the full softmax at this temperature.
        max_new_tokens: Answer length limit per turn (a constrained whole action gets the
            tokens it needs: `apo_agent.model.constrained.answer_budget`).

    ``reset(seed)`` with a seed re-seeds torch before each turn (`step_seed`), so an episode
    plays the same whichever slot runs it; without one (the rollouts) sampling goes on from
    the global generator, as a training run's seed set it.
    """

    def __init__(
        self, engine: RolloutEngine, encoder: PromptEncoder, temperature: float, max_new_tokens: int
    ) -> None:
        self.engine = engine
        self.encoder = encoder
        self.temperature = temperature
        self.max_new_tokens = max_new_tokens
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        self._seed = seed
        self.context = EpisodeContext(self.encoder)
        self.last_output: str | None = None

    def act(self, observation: str, info: Info) -> str:
        return type(self).act_batch([self], [observation], [info])[0]

    @classmethod
    def act_batch(
        cls, agents: Sequence[PolicyAgent], observations: Sequence[str], infos: Sequence[Info]
    ) -> list[str]:
        """One batched generation for all agents (the first one's engine and settings)."""
        first = agents[0]
        seed = step_seed(first._seed, len(first.context.actions))
        if seed is not None:  # sampled answers depend on the episode seed and the turn
            import torch

            torch.manual_seed(seed)
        contexts = [agent.context for agent in agents]
        prompts = [c.prompt(o, dict(i)) for c, o, i in zip(contexts, observations, infos, strict=True)]
        texts = sample_turn(
            first.engine,
            contexts,
            prompts,
            max_new_tokens=first.max_new_tokens,
            temperature=first.temperature,
        )
        for agent, text in zip(agents, texts, strict=True):
            agent.last_output = text
        return [context.actions[-1] for context in contexts]


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
