"""A transformers causal LM as a chat backend: the in-process engine of `apo_agent.agent.LLMAgent`.

`TransformersChat` answers conversations (chat messages) through the tokenizer's chat
template, greedy or sampled, all slots in one left-padded batch, or one at a time from the
cached prefix each prompt shares with an earlier sequence (`apo_agent.engines.prefix_cache`).
Constrained answers go through the same mask as training's sampling
(`apo_agent.engines.transformers.AllowedTokens`, here also closing free search queries) and
the same answer budget (`apo_agent.model.constrained.answer_budget`). The HTTP counterpart is
`apo_agent.engines.openai_http.OpenAIChat`.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from apo_agent.engines.base import Message
from apo_agent.engines.prefix_cache import PrefixCaches
from apo_agent.engines.transformers import AllowedTokens
from apo_agent.model.answer_regex import THINK_CLOSE, THINK_OPEN
from apo_agent.model.constrained import (
    ActionConstraint,
    ActionVocabulary,
    PageActions,
    answer_budget,
    stop_token_ids,
)

__all__ = ["CLOSING_ROOM", "TokenCounts", "TransformersChat"]

CLOSING_ROOM = 6
"""Answer tokens kept to close a free search query (``]</action>`` and the stop token)."""


@dataclass
class TokenCounts:
    """What a `TransformersChat` has read and written so far.

    Attributes:
        sent: Prompt tokens asked about (every turn's whole prompt, padding left out).
        processed: Prompt positions the model computed: ``sent`` less what came from a
            reused cache, plus the padding of batched prompts (it is computed too).
        generated: Answer positions the model computed (in a batch every row runs until the
            last one stops, so a finished row's padding counts too).
    """

    sent: int = 0
    processed: int = 0
    generated: int = 0


class TransformersChat:
    """A transformers causal LM with its chat template.

    Args:
        model: Hub name or local folder (nothing is downloaded if it is a folder).
        temperature: 0 for greedy decoding, else sampling at this temperature.
        top_p: Nucleus sampling mass (sampling only).
        max_new_tokens: Longest answer.
        device: ``"cpu"``, ``"cuda"``, ... (default: cuda when available).
        dtype: Torch dtype name for the weights (``"float32"``, ``"bfloat16"``, ``"auto"``).
        constrained: Answer only with the page's actions (needs ``pages`` in `complete`).
        reuse_prefix: Start each prompt from the cached keys and values of the longest
            token prefix it shares with an earlier sequence (`PrefixCaches`). Prompts are
            then generated one at a time, not in a left-padded batch: a row's cached
            prefix would have to sit at the same padded positions in every row, which
            prompts of different lengths never do. Greedy answers are the same either way
            (sampled ones draw in another order). None: on when the model runs on the CPU,
            where SmolLM2 spent 17-58% less CPU time with it, also against a batch of
            slots (benchmarks/results/prompt-tokens.md); off elsewhere, where batching is
            worth more and reuse was not measured.
    """

    def __init__(
        self,
        model: str,
        temperature: float = 0.0,
        top_p: float = 1.0,
        max_new_tokens: int = 128,
        device: str | None = None,
        dtype: str = "auto",
        constrained: bool = False,
        reuse_prefix: bool | None = None,
    ) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from apo_agent.model.pretrained import resolve_model

        model = resolve_model(model)
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0 (0 is greedy), got {temperature}")
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.tokenizer = AutoTokenizer.from_pretrained(model)
        if self.tokenizer.chat_template is None:
            raise ValueError(
                f"the tokenizer of {model!r} has no chat template; use an instruction-tuned model"
            )
        self.tokenizer.padding_side = "left"
        self.tokenizer.truncation_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        loaded = AutoModelForCausalLM.from_pretrained(model, dtype=dtype)
        self.model = loaded.to(self.device).eval()  # type: ignore[arg-type]
        self.temperature = temperature
        self.top_p = top_p
        self.max_new_tokens = max_new_tokens
        limit = getattr(self.model.config, "max_position_embeddings", None) or self.tokenizer.model_max_length
        self.max_prompt_tokens = max(16, min(int(limit), 1 << 20) - 2 * max_new_tokens)
        self.constrained = constrained
        self.reuse_prefix = self.device == "cpu" if reuse_prefix is None else reuse_prefix
        self.prefixes = PrefixCaches()
        self.token_counts = TokenCounts()
        # Recent transformers call generate's cache argument ``cache``, older ones ``past_key_values``.
        forward = inspect.signature(self.model.forward).parameters
        self._cache_argument = "cache" if "cache" in forward else "past_key_values"
        self._vocabulary: Any = None
        if constrained:
            self.stop_ids = stop_token_ids(self.tokenizer, getattr(self.model, "generation_config", None))
            self._vocabulary = ActionVocabulary(self.tokenizer, self.stop_ids)

    def complete(
        self,
        conversations: Sequence[Sequence[Message]],
        seed: int | None = None,
        pages: Sequence[PageActions] | None = None,
        think: bool = False,
    ) -> list[str]:
        import torch

        prompts = [
            str(self.tokenizer.apply_chat_template(list(c), tokenize=False, add_generation_prompt=True))
            for c in conversations
        ]
        if self.temperature > 0 and seed is not None:
            torch.manual_seed(seed)
        if not self.constrained:
            return self._generate(prompts)
        if pages is None or len(pages) != len(prompts):
            raise ValueError("a constrained backend needs the page's actions of every conversation")
        thoughts = [""] * len(prompts)
        if think:
            # The thought is free; it ends at </think> (added when the model runs out of tokens).
            started = [prompt + THINK_OPEN for prompt in prompts]
            said = self._generate(started, stop_strings=[THINK_CLOSE])
            thoughts = [THINK_OPEN + text.split(THINK_CLOSE)[0] + THINK_CLOSE for text in said]
        constraints = [
            ActionConstraint.for_page(self._vocabulary, page.available_actions, page.fixed_query)
            for page in pages
        ]
        # The one budget rule (`whole_answer_budget`, as over HTTP): no whole action cut short.
        actions = self._generate(
            [prompt + thought for prompt, thought in zip(prompts, thoughts, strict=True)],
            constraints,
            max_new_tokens=max(answer_budget(self.max_new_tokens, c) for c in constraints),
        )
        return [thought + action for thought, action in zip(thoughts, actions, strict=True)]

    def _generate(
        self,
        prompts: Sequence[str],
        constraints: Sequence[Any] | None = None,
        stop_strings: list[str] | None = None,
        max_new_tokens: int | None = None,
    ) -> list[str]:
        """The continuations of ``prompts`` (chat-templated text): in one left-padded batch,
        or with ``reuse_prefix`` one at a time, each from its cached prefix."""
        if not self.reuse_prefix:
            return self._generate_batch(prompts, constraints, stop_strings, max_new_tokens)
        # Two caches a conversation: the one it reuses and the one it leaves for its next turn.
        self.prefixes.capacity = max(self.prefixes.capacity, 2 * len(prompts))
        rows = constraints if constraints is not None else [None] * len(prompts)
        return [
            self._generate_batch([prompt], None if row is None else [row], stop_strings, max_new_tokens)[0]
            for prompt, row in zip(prompts, rows, strict=True)
        ]

    def _generate_batch(
        self,
        prompts: Sequence[str],
        constraints: Sequence[Any] | None = None,
        stop_strings: list[str] | None = None,
        max_new_tokens: int | None = None,
    ) -> list[str]:
        """Continuations in one left-padded batch (of one prompt when reusing prefixes), of up
        to ``max_new_tokens`` (default: the backend's)."""
        import torch
        from transformers import LogitsProcessorList

        # The chat template already wrote any special tokens the model expects.
        inputs = self.tokenizer(
            list(prompts),
            return_tensors="pt",
            padding=True,
            truncation=True,
            max_length=self.max_prompt_tokens,
            add_special_tokens=False,
        ).to(self.device)
        options: dict[str, Any] = {"do_sample": False}
        if self.temperature > 0:
            options = {"do_sample": True, "temperature": self.temperature, "top_p": self.top_p}
        if constraints is not None:
            width = inputs["input_ids"].shape[1]
            # A free query is closed CLOSING_ROOM tokens before max_new_tokens, so it ends whole.
            close_at = max(1, self.max_new_tokens - CLOSING_ROOM)
            processor = AllowedTokens(constraints, width, close_queries_at=close_at)
            options["logits_processor"] = LogitsProcessorList([processor])
            options["eos_token_id"] = self.stop_ids
        if stop_strings:
            options.update(stop_strings=stop_strings, tokenizer=self.tokenizer)
        ids = inputs["input_ids"]
        reuse, reused = self.reuse_prefix and len(ids) == 1, 0  # one row: no padding to shift the prefix
        if reuse:
            cache, reused = self.prefixes.take(ids[0].cpu())
            options[self._cache_argument] = cache
        with torch.no_grad():
            output = self.model.generate(
                **inputs,
                max_new_tokens=max_new_tokens or self.max_new_tokens,
                pad_token_id=self.tokenizer.pad_token_id,
                **options,
            )
        if reuse:
            self.prefixes.keep(output[0].cpu(), cache)
        new_tokens = output[:, ids.shape[1] :]
        counts = self.token_counts
        counts.sent += int(inputs["attention_mask"].sum())
        counts.processed += ids.numel() - reused
        counts.generated += new_tokens.numel()
        return self.tokenizer.batch_decode(new_tokens, skip_special_tokens=True)
