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
from apo_agent.model.constrained import ActionConstraint, ActionVocabulary, Allowed, answer_budget


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
        processors.append(AllowedTokens(constraints, width))
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


class AllowedTokens:
    """A transformers logits processor, the one constrained-decoding mask: every token
    outside a row's allowed ids (`ActionConstraint.allowed_next`) gets -inf.

    Training samples with it as it is (the allowed ids are what the log-probs are scored
    over, `apo_agent.model.policy.LMPolicy.token_logprobs`). A chat agent
    (`apo_agent.engines.transformers_chat`) also closes free search queries
    (``close_queries_at``): the query may not hold ``<``, ``[``, ``]`` or a line break, nor
    stop, and the first ``]`` closes it: what follows is ``</action>`` and the stop token, so
    every answer is a whole action (a query still open at ``close_queries_at`` answer tokens
    is closed then).

    Args:
        constraints: One per row (None: that row is free).
        prompt_width: Columns of the (left-padded) prompt; the answer starts after them.
        close_queries_at: Answer tokens after which an open query is closed; None: queries
            stay free (training's sampling).
    """

    def __init__(
        self,
        constraints: Sequence[ActionConstraint | None],
        prompt_width: int,
        close_queries_at: int | None = None,
    ) -> None:
        self.constraints = constraints
        self.prompt_width = prompt_width
        self.close_queries_at = close_queries_at

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        answers = input_ids[:, self.prompt_width :].tolist()
        for row, constraint in enumerate(self.constraints):
            if constraint is None:
                continue
            allowed = constraint.allowed_next(answers[row])
            if allowed is None and self.close_queries_at is not None:
                allowed = self._in_query(constraint, answers[row], scores, row)
            if allowed is not None:
                keep = torch.full_like(scores[row], float("-inf"))
                index = torch.tensor(allowed, device=scores.device)
                keep[index] = scores[row, index]
                scores[row] = keep
        return scores

    def _in_query(
        self, constraint: ActionConstraint, answer: list[int], scores: torch.Tensor, row: int
    ) -> Allowed:
        """Inside a free query: the ids that close it once it has a ``]`` or ran long
        (returned), else the query's banned ids masked in ``scores`` (None returned)."""
        prefix = constraint.open_prefix
        if prefix is None:
            return None
        text = "".join(constraint.vocabulary.text.get(i, "") for i in answer)
        if not text.startswith(prefix):
            return None
        query = text[len(prefix) :]
        assert self.close_queries_at is not None
        if "]" in query or len(answer) >= self.close_queries_at:  # only </action>, then stop
            whole = prefix + query.split("]")[0] + _CLOSING
            return type(constraint)(constraint.vocabulary, (whole,), None).allowed_next(answer)
        scores[row, _not_in_query(constraint.vocabulary).to(scores.device)] = float("-inf")
        return None


_ACTION_CLOSE = "</action>"
_CLOSING = "]" + _ACTION_CLOSE
_NOT_IN_QUERY: dict[int, torch.Tensor] = {}


def _not_in_query(vocabulary: ActionVocabulary) -> torch.Tensor:
    """Token ids a search query may not use (by vocabulary): specials, ``<``, line breaks,
    and ``]`` unless what follows it in the token starts ``</action>``."""
    key = id(vocabulary)
    if key not in _NOT_IN_QUERY:
        size = max(len(vocabulary.tokenizer), max(vocabulary.text, default=0) + 1)
        banned = torch.ones(size, dtype=torch.bool)
        for token_id, text in vocabulary.text.items():
            head, bracket, tail = text.partition("]")
            bad_tail = bool(bracket) and not _ACTION_CLOSE.startswith(tail)
            banned[token_id] = "<" in head or "[" in head or "\n" in text or bad_tail
        _NOT_IN_QUERY[key] = banned.nonzero().squeeze(1)
    return _NOT_IN_QUERY[key]


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
