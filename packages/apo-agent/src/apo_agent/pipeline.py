"""The whole job, end to end: make pi_ref, evaluate it, train (A*PO or GRPO), evaluate again.

``model="tiny"`` (the CPU demo) builds pi_ref here (`build_reference`): a tokenizer trained on
the catalogue and prompt text, a small Llama (`apo_agent.model.tiny`), and a supervised warm
start (`apo_agent.warm_start`) on `NoisyExpert` demonstrations. A hub model or local path is
pi_ref as it is (or warm-started first when ``sft_epochs > 0``).

`run_pipeline` is what ``python -m apo_agent`` runs: pi_ref, its test evaluation
(`apo_agent.evaluation`), `apo_agent.trainer.train`, and the trained
policy's test evaluation, written to ``<output_dir>/results.json``. A finished step is reused
when the pipeline runs again with the same settings.

The evaluation helpers this module used to hold are thin aliases of
`apo_agent.evaluation.evaluate` now, kept for callers outside the package.
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

from apo_agent.config import TINY_MODEL, TrainConfig
from apo_agent.evaluation import EvalResult, evaluate, evaluate_reference
from apo_agent.model.policy import LMPolicy, resolve_device
from apo_agent.model.tiny import build_tiny_model, product_ids, shop_texts, train_tokenizer
from apo_agent.rollout.envs import env_spec, make_envs, split_goals
from apo_agent.rollout.tokens import prompt_encoder
from apo_agent.runtime.lock import locked_folder
from apo_agent.runtime.metrics import read_metrics
from apo_agent.runtime.seeding import seed_everything
from apo_agent.trainer import train
from apo_agent.warm_start.demonstrations import collect_demonstrations
from apo_agent.warm_start.reference import reference_folder, reference_settings
from apo_agent.warm_start.supervised import supervised_warm_start

__all__ = [
    "build_reference",
    "collect_demonstrations",
    "evaluate_checkpoint",
    "evaluate_on_split",
    "evaluate_reference",
    "evaluate_saved",
    "evaluate_saved_episodes",
    "reference_folder",
    "reference_settings",
    "results_table",
    "run_pipeline",
]


# ---- pi_ref ----------------------------------------------------------------------------------
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


# ---- the former evaluation helpers: one call of `evaluate` each ------------------------------
def evaluate_on_split(
    policy: LMPolicy, config: TrainConfig, description: str, split: str = "test", stride: int = 1
) -> EvalResult:
    """`evaluate` of a loaded policy, without seeding first: the test split's first
    ``test_goals`` goals, or every ``stride``-th goal of another split."""
    return evaluate(
        policy, config, split=split, goals=_stride(split, stride), reseed=False, description=description
    )


def evaluate_saved(
    config: TrainConfig, model_path: str, description: str, split: str = "test", stride: int = 1
) -> dict[str, Any]:
    """The summary of `evaluate_saved_episodes`."""
    return evaluate_saved_episodes(config, model_path, description, split, stride).summary()


def evaluate_saved_episodes(
    config: TrainConfig, model_path: str, description: str, split: str = "test", stride: int = 1
) -> EvalResult:
    """`evaluate` of a saved policy (seeded from ``config.seed``), with its episodes."""
    return evaluate(model_path, config, split=split, goals=_stride(split, stride), description=description)


def evaluate_checkpoint(
    config: TrainConfig, reference_path: str, checkpoint: str | Path, description: str
) -> dict[str, Any]:
    """The `evaluate` summary of a Stage 2 checkpoint of a run that started from
    ``reference_path``, on the test split (full fine-tuning checkpoints only)."""
    return evaluate(reference_path, config, checkpoint=checkpoint, description=description).summary()


def _stride(split: str, stride: int) -> slice | None:
    if stride < 1:
        raise ValueError(f"stride must be at least 1, got {stride}")
    return None if split == "test" else slice(None, None, stride)


def run_pipeline(config: TrainConfig) -> dict[str, Any]:
    """pi_ref -> test evaluation -> training -> test evaluation; returns (and writes) the results.

    Raises :class:`~apo_agent.runtime.lock.FolderInUseError` if another process is writing to
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
    trained_result = evaluate(
        training.policy, config, description=f"test evaluation: after {config.algorithm}"
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
