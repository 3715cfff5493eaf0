"""A*PO (and GRPO) training of LLM shopping agents on WebShop through the Gymnasium step API.

The package by stage and seam (the README has the maths and the recorded results):

* `config` (the run's settings, one section per stage: `RunConfig`, `ModelConfig`,
  `DecodingConfig`, `EnvConfig`, `TinyModelConfig`, `WarmStartConfig`, `RLConfig`, and
  `TrainConfig`, all of them flat) and `presets` (the named starting configurations);
* `model/`: the policy (`LMPolicy`), the token sequences it scores, constrained decoding,
  the tiny model built from scratch and the offline SmolLM2;
* `engines/`: the rollout-engine seam and its backends (transformers, vLLM);
* `rollout/`: envs, prompts as token ids, goals of one's own, `collect_episodes`, token records;
* `warm_start/`: demonstrations, the supervised warm start, and pi_ref made once and shared;
* `optimal_values` (Stage 1), `objectives` (the losses), `trainer` (Stage 1 + Stage 2: `train`);
* `evaluation`: one `evaluate` for every evaluation;
* `pipeline`: the whole job (`run_pipeline`), which ``python -m apo_agent`` (`__main__`) runs;
* `runtime/`: checkpoints, metrics, seeding, the folder lock.

Example:
    >>> from apo_agent import TrainConfig
    >>> TrainConfig.from_preset("cpu-demo").algorithm
    'apo'
"""

from __future__ import annotations

from typing import Any

from apo_agent.config import TrainConfig
from apo_agent.presets import PRESETS

__version__ = "0.1.0"
__all__ = ["PRESETS", "TrainConfig", "evaluate", "run_pipeline", "train"]


def __getattr__(name: str) -> Any:
    # The entry points import torch and transformers: only when asked for, so that the
    # command line's --help and the config stay light.
    if name == "run_pipeline":
        from apo_agent.pipeline import run_pipeline

        return run_pipeline
    if name == "train":
        from apo_agent.trainer import train

        return train
    if name == "evaluate":
        from apo_agent.evaluation import evaluate

        return evaluate
    raise AttributeError(f"module 'apo_agent' has no attribute {name!r}")
