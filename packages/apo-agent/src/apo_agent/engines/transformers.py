"""The transformers backend: `LMPolicy`'s own model samples with ``generate``.

It shares the policy's weights, so there is nothing to sync, and it runs wherever the
policy runs (the default, and the only backend on a machine without vLLM).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from apo_agent.constrained import ActionConstraint
from apo_agent.generation import Sample
from apo_agent.policy import LMPolicy


class TransformersEngine:
    """Samples with the policy's own model (`LMPolicy.sample`)."""

    def __init__(self, policy: LMPolicy) -> None:
        self.policy = policy

    @property
    def tokenizer(self) -> Any:
        return self.policy.tokenizer

    def sample(
        self,
        prompts: Sequence[Sequence[int]],
        *,
        max_new_tokens: int,
        temperature: float,
        constraints: Sequence[ActionConstraint | None] | None = None,
    ) -> list[Sample]:
        return self.policy.sample(prompts, max_new_tokens, temperature, constraints)

    def sync_weights(self, model: Any) -> None:
        """Nothing to do when ``model`` is the policy's own model (it samples with it);
        another model becomes the one sampled from."""
        if model is not self.policy.model:
            self.policy = LMPolicy(model, self.policy.tokenizer, self.policy.device, self.policy.bf16)
