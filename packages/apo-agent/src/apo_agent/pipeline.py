"""The whole job, end to end: make pi_ref, evaluate it, train (A*PO or GRPO), evaluate again.

``model="tiny"`` (the CPU demo) builds pi_ref here: a tokenizer trained on the catalogue
and prompt text, a small Llama, and a supervised warm start on `NoisyExpert`
demonstrations. A hub model or local path is pi_ref as it is (or warm-started first when
``sft_epochs > 0``). Everything is written under ``output_dir``; a finished step is reused
when the pipeline runs again with the same settings.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
import time
from pathlib import Path
from typing import Any

import torch
from tqdm.auto import tqdm

from apo_agent.checkpoint import load_weights
from apo_agent.config import PROMPT_FIELDS, TINY_MODEL, TrainConfig
from apo_agent.evaluation import EvalResult, evaluate
from apo_agent.metrics import read_metrics
from apo_agent.policy import LMPolicy, resolve_device
from apo_agent.rollout import make_envs
from apo_agent.run_lock import locked_folder
from apo_agent.seeding import seed_everything
from apo_agent.tiny import build_tiny_model, product_ids, shop_texts, train_tokenizer
from apo_agent.trainer import env_spec, prompt_encoder, rollout_engine, split_goals, train
from apo_agent.warm_start import collect_demonstrations, supervised_warm_start

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
    if config.torch_threads:
        torch.set_num_threads(config.torch_threads)
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


def evaluate_on_split(
    policy: LMPolicy, config: TrainConfig, description: str, split: str = "test", stride: int = 1
) -> EvalResult:
    """One episode per goal: the test split's first ``config.test_goals`` goals, or every
    ``stride``-th goal of another split (to compare training goals with unseen ones)."""
    if stride < 1:
        raise ValueError(f"stride must be at least 1, got {stride}")
    envs = make_envs(env_spec(config), split, config.num_envs)
    if split == "test":
        goals = split_goals(envs[0], config.test_goals)
    else:
        goals = split_goals(envs[0], None)[::stride]
    # A run that samples on vLLM is evaluated on it too: the same distribution as the policy's
    # (tests/test_vllm.py) for a fraction of the CPU time.
    player = policy if config.rollout_engine == "transformers" else rollout_engine(policy, config)
    return evaluate(
        player,
        envs,
        prompt_encoder(policy.tokenizer, config),
        goals,
        temperature=config.eval_temperature,
        max_new_tokens=config.max_new_tokens,
        seed=config.seed,
        description=description,
        progress=config.progress,
    )


def evaluate_saved(
    config: TrainConfig, model_path: str, description: str, split: str = "test", stride: int = 1
) -> dict[str, Any]:
    """The summary of `evaluate_saved_episodes`."""
    return evaluate_saved_episodes(config, model_path, description, split, stride).summary()


def evaluate_saved_episodes(
    config: TrainConfig, model_path: str, description: str, split: str = "test", stride: int = 1
) -> EvalResult:
    """A saved policy on the test split, or on every ``stride``-th goal of another split
    (seeded from ``config.seed``, as the pipeline does), with its episodes."""
    seed_everything(config.seed)
    policy = LMPolicy.load(model_path, device=config.device, bf16=config.bf16, with_reference=False)
    return evaluate_on_split(policy, config, description, split, stride)


def evaluate_checkpoint(
    config: TrainConfig, reference_path: str, checkpoint: str | Path, description: str
) -> dict[str, Any]:
    """A Stage 2 checkpoint of a run that started from ``reference_path``, on the test split.

    Checkpoints hold the trained weights only: full fine-tuning (``lora_rank=0``) is needed,
    since a LoRA checkpoint's adapters have no model to go into here."""
    if config.lora_rank:
        raise ValueError("evaluate_checkpoint reads full fine-tuning checkpoints; evaluate final-model/")
    seed_everything(config.seed)
    policy = LMPolicy.load(reference_path, device=config.device, bf16=config.bf16, with_reference=False)
    load_weights(checkpoint, policy)
    return evaluate_on_split(policy, config, description).summary()


def evaluate_reference(config: TrainConfig, reference_path: str) -> dict[str, Any]:
    """pi_ref on the test split, kept beside it: runs that share pi_ref (A*PO and GRPO of a
    seed) and evaluate it the same way (test goals, temperature) evaluate it once."""
    with locked_folder(reference_folder(config), role="reference_dir", wait=True):
        return _evaluate_reference(config, reference_path)


def _evaluate_reference(config: TrainConfig, reference_path: str) -> dict[str, Any]:
    path = reference_folder(config) / "test-evaluation.json"
    key = {
        "reference": reference_settings(config),
        "test_goals": config.test_goals,
        "eval_temperature": config.eval_temperature,
    }
    entries = json.loads(path.read_text())["evaluations"] if path.is_file() else []  # one per key
    for entry in entries:
        if entry["key"] == key:
            return dict(entry["result"])
    result = evaluate_saved(config, reference_path, "test evaluation: pi_ref")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"evaluations": [*entries, {"key": key, "result": result}]}, indent=2))
    return result


def run_pipeline(config: TrainConfig) -> dict[str, Any]:
    """pi_ref -> test evaluation -> training -> test evaluation; returns (and writes) the results.

    Raises :class:`~apo_agent.run_lock.FolderInUseError` if another process is writing to
    ``config.output_dir``."""
    with locked_folder(config.output_dir):
        return _run_pipeline(config)


def _run_pipeline(config: TrainConfig) -> dict[str, Any]:
    started = time.perf_counter()
    output_dir = Path(config.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    if config.torch_threads:
        torch.set_num_threads(config.torch_threads)

    reference_path = build_reference(config)
    reference_done = time.perf_counter()
    reference_result = evaluate_reference(config, reference_path)

    training = train(config, model=reference_path)
    trained_done = time.perf_counter()
    seed_everything(config.seed)
    trained_result = evaluate_on_split(
        training.policy, config, f"test evaluation: after {config.algorithm}"
    ).summary()
    finished = time.perf_counter()

    last_step = read_metrics(training.metrics_path)[-1]
    results = {
        "config": dataclasses.asdict(config),
        "reference_model": reference_path,
        "test": {"reference": reference_result, "trained": trained_result},
        "improvement": {
            "success": trained_result["success"] - reference_result["success"],
            "score": trained_result["score"] - reference_result["score"],
        },
        "stage2_episodes": int(last_step.get("episodes", 0)),  # fewer than steps allow under cpu_budget_s
        "stage2_steps": int(last_step.get("step", 0)),
        "stage1_episodes": (
            len(training.optimal_values) * config.reference_samples if config.algorithm == "apo" else 0
        ),
        "goals_trained": sum(v.kept_by(config.goal_filter) for v in training.optimal_values.values()),
        "wall_time_s": {
            "reference": reference_done - started,
            "training": training.wall_time_s,
            # Sampling Stage 1's episodes, also when this run read them from a shared cache.
            "stage1": training.stage1_s,
            "stage2": float(last_step["wall_time_s"]),
            "test_evaluation": finished - trained_done,
            "total": finished - started,
        },
        # The training stages in CPU seconds (every thread of the process): on a machine that
        # other work shares, the fairer clock.
        "cpu_time_s": {"stage1": training.stage1_cpu_s, "stage2": float(last_step["cpu_time_s"])},
        # The most GPU memory torch held at once in this process (training and evaluations).
        "peak_gpu_memory_gib": (
            torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else None
        ),
        "metrics": str(training.metrics_path),
        "learning_curve": str(training.curve_path),
        "final_model": str(training.model_dir),
    }
    (output_dir / "results.json").write_text(json.dumps(results, indent=2, default=str))
    return results


def results_table(results: dict[str, Any]) -> str:
    """A Markdown table of pi_ref vs the trained policy on the test split."""
    reference, trained = results["test"]["reference"], results["test"]["trained"]
    algorithm = results["config"]["algorithm"]
    lines = [
        f"| policy ({results['config']['env_id']}, test, {trained['goals']} goals) | success % | score |",
        "|---|---|---|",
        f"| pi_ref | {reference['success']:.1f} | {reference['score']:.1f} |",
        f"| after {algorithm} | {trained['success']:.1f} | {trained['score']:.1f} |",
    ]
    return "\n".join(lines)
