"""What decides pi_ref and where it is kept: a stored pi_ref (and its test evaluation) is
reused only when `reference_settings` match; runs that name the same ``reference_dir`` (the
A*PO and GRPO runs of a seed) share it. `apo_agent.pipeline.build_reference` builds it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from apo_agent.config import PROMPT_FIELDS, TrainConfig

# The fields that decide what pi_ref is: a stored pi_ref is reused only if they match. The
# reward variant is not one of them: the warm start imitates the demonstrator's actions, and
# evaluations read success and score from the env's info, so one pi_ref serves every reward.
_REFERENCE_FIELDS = (
    "model",
    "seed",
    "env_id",
    "catalog",
    "goals",
    "max_steps",
    *PROMPT_FIELDS,
    "tiny_vocab_size",
    "tiny_hidden_size",
    "tiny_layers",
    "tiny_heads",
    "sft_epochs",
    "sft_learning_rate",
    "sft_batch_size",
    "demo_goals",
    "demo_skip_options_prob",
    "demo_random_action_prob",
    "demo_product",
    "demo_option_variants",
)


def reference_settings(config: TrainConfig) -> dict[str, Any]:
    return {name: getattr(config, name) for name in _REFERENCE_FIELDS}


def reference_folder(config: TrainConfig) -> Path:
    return Path(config.reference_dir or Path(config.output_dir) / "reference")
