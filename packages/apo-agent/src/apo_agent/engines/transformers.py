"""The transformers backend: the policy's own model samples with ``generate``.

`TransformersEngine` shares the policy's weights, so there is nothing to sync, and it runs
wherever the policy runs (the default, and the only backend on a machine without vLLM).
`sample_batch` is its sampler: prompts are token ids (never text); each answer comes back as
the ids sampled and, per id, its log-probability under the distribution it was drawn from:
the softmax of the logits restricted to the allowed ids (constrained decoding) and divided
by the temperature (at ``temperature == 0``, greedy, the undivided softmax). At temperature
1 that is exactly what `apo_agent.model.policy.LMPolicy.token_logprobs` scores for the same ids.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any, Protocol

import torch

from apo_agent.engines.base import Sample
from apo_agent.model.constrained import ActionConstraint, answer_budget


class LocalPolicy(Protocol):
    """What this engine samples with: an `apo_agent.model.policy.LMPolicy` (named by its
    shape, so that the policy can offer this engine's sampling without an import cycle)."""

    model: Any
    tokenizer: Any
    stop_ids: list[int]
    pad_id: int
    device: torch.device
    bf16: bool

    def with_model(self, model: Any) -> LocalPolicy:
        """The same policy around another model (tokenizer, device and precision kept)."""
        ...


class TransformersEngine:
    """Samples with the policy's own model (`sample_batch`)."""

    def __init__(self, policy: LocalPolicy) -> None:
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
        return sample_batch(
            self.policy.model,
            prompts,
            stop_ids=self.policy.stop_ids,
            pad_id=self.policy.pad_id,
            device=self.policy.device,
            max_new_tokens=max_new_tokens,
            temperature=temperature,
            constraints=constraints,
            bf16=self.policy.bf16,
        )

    def sync_weights(self, model: Any) -> None:
        """Nothing to do when ``model`` is the policy's own model (it samples with it);
        another model becomes the one sampled from."""
        if model is not self.policy.model:
            self.policy = self.policy.with_model(model)


@torch.no_grad()
def sample_batch(
    model: Any,
    prompts: Sequence[Sequence[int]],
    *,
    stop_ids: Sequence[int],
    pad_id: int,
    device: torch.device,
    max_new_tokens: int,
    temperature: float,
    constraints: Sequence[ActionConstraint | None] | None = None,
    bf16: bool = False,
) -> list[Sample]:
    """Samples one answer per prompt in one left-padded ``model.generate`` batch.

    Each answer ends at its first stop token (kept) or after ``max_new_tokens``.
    ``temperature == 0`` decodes greedily; otherwise tokens come from the full softmax (no
    top-k / top-p). ``constraints`` (one per prompt, or None) restrict each answer to its
    page's actions (`apo_agent.model.constrained`); a whole action longer than ``max_new_tokens``
    gets the tokens it needs (`apo_agent.model.constrained.answer_budget`).
    """
    from transformers import GenerationConfig, LogitsProcessorList

    if not prompts:
        return []
    if constraints is not None and len(constraints) != len(prompts):
        raise ValueError(f"{len(prompts)} prompts but {len(constraints)} constraints")
    budgets = [answer_budget(max_new_tokens, c) for c in constraints or [None] * len(prompts)]
    width = max(len(p) for p in prompts)
    input_ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for row, prompt in enumerate(prompts):
        input_ids[row, width - len(prompt) :] = torch.tensor(list(prompt), dtype=torch.long)
        attention_mask[row, width - len(prompt) :] = 1
    # Every field that shapes the distribution is set here, so that the model's own
    # generation_config (top-k, top-p, repetition penalty, ...) cannot change it.
    sampling: dict[str, Any] = dict(do_sample=False)
    if temperature > 0:
        sampling = dict(do_sample=True, temperature=temperature, top_k=0, top_p=1.0)
    generation_config = GenerationConfig(
        max_new_tokens=max(budgets),
        eos_token_id=list(stop_ids),
        pad_token_id=pad_id,
        repetition_penalty=1.0,
        **sampling,
    )
    for owner in {id(model): model, id(_base_model(model)): _base_model(model)}.values():
        owner.generation_config = generation_config
    processors = LogitsProcessorList()
    if constraints is not None and any(c is not None for c in constraints):
        processors.append(_AllowedTokens(constraints, width))
    recorder = _LogprobRecorder(temperature)
    processors.append(recorder)  # last: it sees the logits the sampler draws from
    was_training = model.training
    model.eval()
    autocast: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()
    if bf16 and device.type == "cuda":
        autocast = torch.autocast("cuda", dtype=torch.bfloat16)
    try:
        with autocast:
            output = model.generate(
                input_ids=input_ids.to(device),
                attention_mask=attention_mask.to(device),
                generation_config=generation_config,
                logits_processor=processors,
            )
    finally:
        model.train(was_training)
    recorder.finish(output[:, -1])
    logprobs = torch.stack(recorder.picked, dim=1).tolist() if recorder.picked else [[] for _ in prompts]
    samples = []
    for row, answer in enumerate(output[:, width:].tolist()):
        # A row stops at its own budget even where the batch ran on for a longer one.
        cut = next((i + 1 for i, token in enumerate(answer) if token in stop_ids), len(answer))
        cut = min(cut, budgets[row])
        samples.append(Sample(answer[:cut], logprobs[row][:cut]))
    return samples


class _AllowedTokens:
    """A transformers logits processor: every token outside a row's allowed ids gets -inf."""

    def __init__(self, constraints: Sequence[ActionConstraint | None], prompt_width: int) -> None:
        self.constraints = constraints
        self.prompt_width = prompt_width

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        answers = input_ids[:, self.prompt_width :].tolist()
        for row, constraint in enumerate(self.constraints):
            allowed = constraint.allowed_next(answers[row]) if constraint is not None else None
            if allowed is not None:
                keep = torch.full_like(scores[row], float("-inf"))
                index = torch.tensor(allowed, device=scores.device)
                keep[index] = scores[row, index]
                scores[row] = keep
        return scores


class _LogprobRecorder:
    """A transformers logits processor that leaves the scores alone and records, one step
    late, the log-prob of the token sampled from them: step t's log-softmax is kept until
    step t + 1 shows which token was drawn (one vocabulary row per sequence in memory,
    instead of ``output_scores``' one per generated token)."""

    def __init__(self, temperature: float) -> None:
        self.temperature = temperature
        self.picked: list[torch.Tensor] = []
        self._previous: torch.Tensor | None = None

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        self.finish(input_ids[:, -1])
        scaled = scores.float() / self.temperature if self.temperature > 0 else scores.float()
        self._previous = torch.log_softmax(scaled, dim=-1)
        return scores

    def finish(self, sampled: torch.Tensor) -> None:
        """Records the log-prob of ``sampled`` (the last tokens) under the pending step."""
        if self._previous is not None:
            picked = self._previous.gather(1, sampled.to(self._previous.device).view(-1, 1)).squeeze(1)
            self.picked.append(picked.cpu())
            self._previous = None


def _base_model(model: Any) -> Any:
    """The transformers model inside a peft wrapper (or the model itself)."""
    get_base = getattr(model, "get_base_model", None)
    return get_base() if callable(get_base) else model
