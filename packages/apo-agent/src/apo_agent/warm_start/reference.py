"""pi_ref: what decides it, where it is kept, and `build_reference`, which makes it.

``model="tiny"`` (the CPU demo) builds pi_ref from scratch: a tokenizer trained on the
catalogue and prompt text, a small Llama (`apo_agent.model.tiny`), and the supervised warm
start (`apo_agent.warm_start.supervised`) on `NoisyExpert` demonstrations. A hub model or local
path is pi_ref as it is, or warm-started first when ``sft_epochs > 0``.

A stored pi_ref (and its test evaluation) is reused only when `reference_settings` match;
runs that name the same ``reference_dir`` (the A*PO and GRPO runs of a seed) share it.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from apo_agent.config import PROMPT_FIELDS, TINY_MODEL, TrainConfig
from apo_agent.model.policy import LMPolicy, resolve_device
from apo_agent.model.tiny import build_tiny_model, product_ids, shop_texts, train_tokenizer
from apo_agent.rollout.envs import env_spec, make_envs, split_goals
from apo_agent.rollout.tokens import prompt_encoder
from apo_agent.runtime.cpu import configure_cpu
from apo_agent.runtime.lock import locked_folder
from apo_agent.runtime.seeding import seed_everything
from apo_agent.warm_start.demonstrations import collect_demonstrations
from apo_agent.warm_start.supervised import supervised_warm_start

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


def build_reference(config: TrainConfig) -> str:
    """pi_ref's location: ``config.model`` itself, or ``<output_dir>/reference`` after a warm start.

    Runs that share ``reference_dir`` take turns: one builds pi_ref, the others wait and reuse it."""
    if config.sft_epochs == 0:
        return config.model
    with locked_folder(reference_folder(config), role="reference_dir", wait=True):
        return _build_reference(config)


def _build_reference(config: TrainConfig) -> str:
    target = reference_folder(config)
    record = target / "reference.json"
    settings = reference_settings(config)
    if record.is_file() and json.loads(record.read_text())["settings"] == settings:
        tqdm.write(f"reusing pi_ref from {target}")
        return str(target)
    started = time.perf_counter()
    configure_cpu(config.torch_threads, resolve_device(config.device))
    seed_everything(config.seed)
    spec = env_spec(config)
    envs = make_envs(spec, "train", config.num_envs)
    if config.model == TINY_MODEL:
        tokenizer = train_tokenizer(
            shop_texts(envs[0]), vocab_size=config.tiny_vocab_size, whole_tokens=product_ids(envs[0])
        )
        model = build_tiny_model(
            tokenizer,
            config.tiny_hidden_size,
            config.tiny_layers,
            config.tiny_heads,
            max_positions=max(1024, config.max_prompt_tokens + config.max_new_tokens),
            product_tokens=product_ids(envs[0]),
        )
        policy = LMPolicy(model.to(resolve_device(config.device)), tokenizer, resolve_device(config.device))
    else:
        policy = LMPolicy.load(config.model, device=config.device, bf16=config.bf16, with_reference=False)
    encoder = prompt_encoder(policy.tokenizer, config)
    demonstrations = collect_demonstrations(
        envs,
        encoder,
        split_goals(envs[0], config.demo_goals),
        skip_options_prob=config.demo_skip_options_prob,
        random_action_prob=config.demo_random_action_prob,
        product=config.demo_product,
        option_variants=config.demo_option_variants,
        seed=config.seed,
        progress=config.progress,
    )
    sequences = [s for episode in demonstrations for s in episode.sequences]
    losses = supervised_warm_start(
        policy,
        sequences,
        epochs=config.sft_epochs,
        learning_rate=config.sft_learning_rate,
        batch_size=config.sft_batch_size,
        seed=config.seed,
        progress=config.progress,
    )
    policy.save(target)
    record.write_text(
        json.dumps(
            {
                "settings": settings,
                "parameters": sum(p.numel() for p in policy.model.parameters()),
                "vocabulary": len(policy.tokenizer),
                "demonstrations": len(demonstrations),
                "demonstration_success": statistics.fmean(e.success for e in demonstrations),
                "demonstration_score": statistics.fmean(e.score for e in demonstrations),
                "sequences": len(sequences),
                "tokens": sum(len(s.ids) for s in sequences),
                "final_loss": statistics.fmean(losses[-20:]),
                "wall_time_s": time.perf_counter() - started,
            },
            indent=2,
        )
    )
    return str(target)
