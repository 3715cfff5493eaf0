"""The engine seams: what the rollouts need from whatever samples the answers (`RolloutEngine`),
and what a chat agent needs from whatever answers its conversations (`ChatBackend`).

A `RolloutEngine` takes prompts as token ids and gives back, per prompt, the ids it sampled
and their log-probs (`Sample`); nothing passes through text, so the episode record
(`apo_agent.rollout.tokens`) holds exactly the ids the training side scores. After every optimizer
step the trainer calls `RolloutEngine.sync_weights` with the trained model, so the next
rollouts sample from the current policy.

A `ChatBackend` answers conversations as text (chat messages in, answer text out), for
`apo_agent.agent.LLMAgent`: a transformers model in process
(`apo_agent.engines.transformers_chat`) or any OpenAI-compatible server
(`apo_agent.engines.openai_http`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from apo_agent.config import EngineName
from apo_agent.model.constrained import ActionConstraint, PageActions

__all__ = ["ChatBackend", "EngineName", "Message", "RolloutEngine", "Sample"]

Message = dict[str, str]
"""One chat message: ``{"role": "system" | "user" | "assistant", "content": text}``."""


@dataclass(frozen=True)
class Sample:
    """One sampled answer: its token ids (ending with the stop token when one was sampled)
    and the log-probability of each id under the distribution it was sampled from."""

    ids: list[int]
    logprobs: list[float]


class RolloutEngine(Protocol):
    """Samples answers for the rollouts (`apo_agent.rollout.episodes.collect_episodes`)."""

    @property
    def tokenizer(self) -> Any:
        """The policy's tokenizer (decodes the sampled ids into the action text)."""
        ...

    def sample(
        self,
        prompts: Sequence[Sequence[int]],
        *,
        max_new_tokens: int,
        temperature: float,
        constraints: Sequence[ActionConstraint | None] | None = None,
    ) -> list[Sample]:
        """One answer per prompt, in order: the sampled ids (up to and including the first
        stop token, or ``max_new_tokens`` of them) and each id's log-prob under the
        distribution it was drawn from (softmax over the allowed ids, divided by the
        temperature). ``temperature == 0`` is greedy; there is no top-k / top-p.
        ``constraints`` (one per prompt, or None) restrict answers to the page's actions; a
        whole action longer than ``max_new_tokens`` gets the tokens it needs
        (`apo_agent.model.constrained.answer_budget`)."""
        ...

    def sync_weights(self, model: Any) -> None:
        """Makes the engine sample from ``model``'s current weights (a transformers causal LM,
        or a peft model around one, of the architecture the engine was started with)."""
        ...


class ChatBackend(Protocol):
    """Answers conversations (lists of `Message`) for `apo_agent.agent.LLMAgent`."""

    def complete(
        self,
        conversations: Sequence[Sequence[Message]],
        seed: int | None = None,
        pages: Sequence[PageActions] | None = None,
        think: bool = False,
    ) -> list[str]:
        """One answer per conversation; with ``pages`` (a constrained backend), answers only
        among each page's actions (after a free thought when ``think``), each given the
        tokens its whole action needs (`apo_agent.model.constrained.whole_answer_budget`)."""
        ...
